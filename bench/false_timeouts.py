"""Correct code under a class's load: no false time-outs (not a test).

`jaxjudge serve` (2 embedded workers, SQLite) on a throwaway database, prepared and
calibrated as an operator would (`jaxjudge prepare --calibrate`). A class burst of
``--burst`` learners each submits a problem's reference within 10 s, and while it
runs one more learner submits every problem's reference, one after the other: every
one of these is correct, so every `time_limit_exceeded` is a false time-out. Also
reported: the load average the burst made, and how long the verdicts took.

    .venv/bin/python -m bench.false_timeouts [--burst 60] [--hogs 3] [--write]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.blocks import write_block
from bench.submit_latency import submit_and_wait
from grader.config import PROJECT_ROOT
from grader.problems.problem import problem_folders
from tests.app.server import Server, jaxjudge, server_env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", type=int, default=60)
    parser.add_argument(
        "--hogs",
        type=int,
        default=0,
        help="CPU-bound processes beside the server all along (other tenants of the machine)",
    )
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="jaxjudge-timeouts-"))
    env = {**server_env(workdir), "JAXJUDGE_MAX_SUBMITS_PER_HOUR": "100000"}
    started = time.monotonic()
    assert jaxjudge(env, "prepare", "--calibrate").returncode == 0
    prepared = time.monotonic() - started
    slugs = [folder.name for folder in problem_folders()]
    sources = {s: (PROJECT_ROOT / "reference_solutions" / f"{s}.py").read_text() for s in slugs}
    tokens = []
    for number in range(args.burst + 1):
        name = f"learner{number}"
        jaxjudge(env, "users", "create", name, "--password-stdin", stdin="long bench password\n")
        tokens.append(jaxjudge(env, "tokens", "create", name).stdout.strip())
    burst: list[tuple[str, str, float]] = []
    references: list[tuple[str, str, float]] = []
    loads: list[float] = []
    lock = threading.Lock()
    done = threading.Event()
    server = Server(env, 2)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    try:
        time.sleep(10)  # the pools start and warm their children

        def learner(number: int) -> None:
            time.sleep(random.Random(number).uniform(0, 10))
            slug = slugs[number % len(slugs)]
            seconds, verdict = submit_and_wait(server.url, tokens[number], slug, sources[slug])
            with lock:
                burst.append((slug, verdict, seconds))

        def every_reference() -> None:
            for slug in slugs:
                seconds, verdict = submit_and_wait(server.url, tokens[-1], slug, sources[slug])
                references.append((slug, verdict, seconds))

        def sample_load() -> None:
            while not done.wait(5.0):
                loads.append(os.getloadavg()[0])

        threads = [threading.Thread(target=learner, args=(n,)) for n in range(args.burst)]
        threads += [threading.Thread(target=every_reference), threading.Thread(target=sample_load)]
        burst_started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads[:-1]:
            thread.join()
        done.set()
        threads[-1].join()
        elapsed = time.monotonic() - burst_started
    finally:
        server.stop()
        for hog in hogs:
            hog.kill()
            hog.wait()
    everything = burst + references
    false = [
        (slug, seconds) for slug, verdict, seconds in everything if verdict == "time_limit_exceeded"
    ]
    other = sorted({v for _, v, _ in everything} - {"accepted", "time_limit_exceeded"})
    lines = [
        "Measured by `bench/false_timeouts.py` through `jaxjudge serve` (2 embedded workers,"
        f" SQLite) on {os.cpu_count()} cores, after `jaxjudge prepare --calibrate`"
        f" ({prepared:.0f} s): a class burst of {args.burst} learners each submitting a"
        " problem's reference within 10 s, and meanwhile every problem's reference submitted"
        " once more, one after the other"
        + (
            f", with {args.hogs} CPU-bound processes running beside the server all along"
            if args.hogs
            else ""
        )
        + ". Every submission is correct.",
        "",
        f"- False time-outs: **{len(false)} of {len(everything)}**"
        + (f" ({', '.join(f'{s} after {t:.0f} s' for s, t in false)})" if false else "")
        + f"; every reference graded during the burst: {sum(v == 'accepted' for _, v, _ in references)}"
        f" of {len(references)} accepted.",
        f"- Load average while it ran (1 minute, every 5 s): median {statistics.median(loads):.1f},"
        f" peak {max(loads):.1f}."
        if loads
        else "- Load average: not sampled.",
        f"- All {len(everything)} verdicts after {elapsed:.0f} s; submit-to-verdict p50"
        f" {statistics.median(t for _, _, t in everything):.1f} s, max"
        f" {max(t for _, _, t in everything):.1f} s.",
    ]
    if other:
        lines.append(f"- Other verdicts (not time-outs): {other}.")
    print("\n".join(lines))
    if args.write:
        write_block("false_timeouts", lines)


if __name__ == "__main__":
    main()
