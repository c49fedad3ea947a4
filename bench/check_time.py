"""`jaxjudge check` of every bank problem from a cold cache, one problem per command, as
an author runs it after an edit on a machine of their own: the whole command's wall
clock (start-up, loading, the reference's and mistakes' run on every variant, the
reference and the starter graded) printed beside the 30 s target. A throwaway data
directory, so no expected outputs or compilation caches of an earlier run are reused.

    .venv/bin/python -m bench.check_time [--write] [SLUG ...]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

from bench.blocks import write_block
from grader.problems.problem import problem_folders

TARGET_SECONDS = 30.0  # issue 42: any single problem's check


def measure(slug: str, data_dir: str) -> tuple[float, bool]:
    """One `jaxjudge check SLUG`: its wall-clock seconds and whether it passed."""
    env = {**os.environ, "JAXJUDGE_DATA_DIR": data_dir}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "app.commands.cli", "check", slug],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return time.monotonic() - started, done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write docs/performance.md's block")
    parser.add_argument("slugs", nargs="*", help="these problems only (default: the whole bank)")
    args = parser.parse_args()
    slugs = args.slugs or [folder.name for folder in problem_folders()]
    data_dir = tempfile.mkdtemp(prefix="jaxjudge-check-")
    times = []
    for slug in slugs:
        seconds, passed = measure(slug, data_dir)
        times.append((slug, seconds, passed))
        print(f"{slug}: {seconds:.1f} s{'' if passed else ' (check failed)'}", flush=True)
    times.sort(key=lambda item: -item[1])
    slowest = times[0][1]
    verdict = "meets" if slowest <= TARGET_SECONDS else "misses"
    lines = [
        f"Measured {datetime.date.today().isoformat()} on {platform.machine()},"
        f" {os.cpu_count()} cores (`python -m bench.check_time`), each problem's"
        " `jaxjudge check` alone from a cold cache:",
        "",
        f"- slowest: **{times[0][0]} {slowest:.1f} s** (target {TARGET_SECONDS:.0f} s for any"
        f" problem: {verdict} it); median {times[len(times) // 2][1]:.1f} s",
        "",
        "| problem | `jaxjudge check` (s, whole command) | passed |",
        "|---|---|---|",
        *(f"| {slug} | {s:.1f} | {'yes' if ok else 'no'} |" for slug, s, ok in times),
    ]
    print("\n".join(lines))
    if not all(ok for _slug, _s, ok in times):
        raise SystemExit("a check failed")
    if args.write:
        write_block("check_time", lines)


if __name__ == "__main__":
    main()
