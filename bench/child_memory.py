"""A grading child's memory while it waits: one warm pool of sandboxed children, as a
server keeps it (libraries imported and warmed up), each child's resident memory read
from /proc once it is warm, beside issue 42's bound of 500 MB. While it works a child
is held to its problem's limit by its sandbox's memory cgroup (docs/security.md).

    .venv/bin/python -m bench.child_memory [--children 2] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from pathlib import Path

from bench.blocks import write_block
from grader.config import settings
from grader.running.gpu_sharing import descendants
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher

TARGET_MB = 500.0
WARM_UP_SECONDS = 30.0  # the warm-up's steps take a few seconds on an idle machine


def _children() -> list[int]:
    """The pids of this process's grading children (the Python inside each sandbox)."""
    pids = []
    for pid in sorted(descendants(os.getpid()) - {os.getpid()}):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command[0].endswith(b"python") and b"grader.child" in b" ".join(command):
            pids.append(pid)
    return pids


def _memory_mb(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) / 1024
    return fields


def measure(children: int) -> list[dict[str, float]]:
    pool = WarmPool(SandboxLauncher(warm_up=True), size=children, memory_mb=settings.pool_memory_mb)
    try:
        if not pool.wait_until_warm():
            raise SystemExit("the pool's children never became ready")
        time.sleep(WARM_UP_SECONDS)
        return [_memory_mb(pid) for pid in _children()]
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="write docs/performance.md's block")
    args = parser.parse_args()
    measured = measure(args.children)
    if not measured:
        raise SystemExit("no grading child found in /proc")
    worst = max(m["VmRSS"] for m in measured)
    verdict = "meets" if worst <= TARGET_MB else "misses"
    lines = [
        "## A waiting grading child's memory (issue 42)",
        "",
        f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} cores"
        f" (`python -m bench.child_memory`): {len(measured)} warm sandboxed pool children,"
        f" read {WARM_UP_SECONDS:.0f} s after they were ready.",
        "",
        *(
            f"- child {i}: {m['VmRSS']:.0f} MB resident ({m['RssAnon']:.0f} MB anonymous,"
            f" {m['RssFile']:.0f} MB of mapped files)"
            for i, m in enumerate(measured, start=1)
        ),
        f"- largest: **{worst:.0f} MB** (target at most {TARGET_MB:.0f} MB: {verdict} it)",
    ]
    print("\n".join(lines))
    if args.write:
        write_block("child_memory", lines)


if __name__ == "__main__":
    main()
