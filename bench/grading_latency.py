"""Grading latency and throughput, measured (not a test).

For each problem, a correct solution (its reference, graded as a submission)
goes through:

  (a) a naive baseline: a fresh `python` child per submission, no sandbox,
      no warm pool, no compilation cache;
  (b) jaxjudge's path: a warm pool of sandboxed children (bubblewrap, seccomp,
      limits), with no compilation cache (trusted runs keep theirs to themselves).

Latency is submit-to-verdict: `grade()` wall time, comparison and diagnosis
included. Then a burst of mixed submissions (correct and wrong, all problems)
through the pool measures throughput and the machine's peak extra memory.

    .venv/bin/python bench/grading_latency.py [--runs N] [--baseline-runs N] [--burst N] [--pool N]

Writes the table to docs/performance.md (with --write).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.blocks import write_block
from grader import expected
from grader.config import settings
from grader.grade import grade
from grader.problems.problem import Problem, load_problem, problem_folders
from grader.running.launch import LaunchSpec, child_argv, clean_environment, rlimit_command
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher
from grader.running.supervise import ProcessRunner
from grader.versions import runtime_versions


class NaiveLauncher:
    """The baseline: a plain child per submission, no sandbox, no compilation cache."""

    def launch(
        self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
    ) -> LaunchSpec:
        return LaunchSpec(
            rlimit_command(address_space_bytes=None) + child_argv(result_fd),
            clean_environment(device, "/tmp", settings.pool_memory_mb),
            "/tmp",
        )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def mem_available_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


class MemorySampler:
    """Peak extra memory in use on the machine while it runs (MemAvailable drop)."""

    def __init__(self) -> None:
        self.baseline = mem_available_kib()
        self.lowest = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.lowest = min(self.lowest, mem_available_kib())

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return (self.baseline - self.lowest) / 1024


def timed_grade(problem: Problem, source: str, runner: object) -> tuple[float, str]:
    started = time.monotonic()
    report = grade(problem, source, runner=runner)  # type: ignore[arg-type]
    return time.monotonic() - started, report.verdict.value


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=8, help="pool gradings per problem")
    parser.add_argument(
        "--baseline-runs", type=int, default=3, help="baseline gradings per problem"
    )
    parser.add_argument(
        "--burst", type=int, default=50, help="mixed submissions in the throughput burst"
    )
    parser.add_argument(
        "--pool", type=int, default=2, help="warm children (and concurrent gradings)"
    )
    parser.add_argument("--write", action="store_true", help="write docs/performance.md")
    args = parser.parse_args()

    problems = [load_problem(folder) for folder in problem_folders()]
    prepare: list[tuple[str, int, float]] = []
    for problem in problems:  # trusted runs: expected outputs of every variant, measured
        trusted = expected.compute(problem)
        expected.store(problem, trusted)
        cases = len(problem.case_bank.keyed()) * (1 + len(problem.mistakes))
        prepare.append((problem.slug, cases, trusted.seconds))
        print(
            f"{problem.slug:32} trusted run: {cases} case runs in {trusted.seconds:.1f} s",
            flush=True,
        )

    rows = []
    baseline_runner = ProcessRunner(NaiveLauncher())
    pool = WarmPool(
        SandboxLauncher(),
        size=args.pool,
        memory_mb=max(p.config.limits.memory_mb for p in problems),
    )
    try:
        for problem in problems:
            source = problem.reference_source
            base = [
                timed_grade(problem, source, baseline_runner)[0] for _ in range(args.baseline_runs)
            ]
            pool.wait_until_warm()
            fast: list[float] = []
            for _ in range(args.runs):
                pool.wait_until_warm()  # latency of one submission on a warm, otherwise idle pool
                seconds, verdict = timed_grade(problem, source, pool)
                assert verdict == "accepted", f"{problem.slug}: {verdict}"
                fast.append(seconds)
            row = (
                problem.slug,
                statistics.median(base),
                percentile(base, 0.95),
                statistics.median(fast),
                percentile(fast, 0.95),
            )
            rows.append(row)
            print(
                f"{row[0]:32} baseline p50 {row[1]:6.2f} s p95 {row[2]:6.2f} s | jaxjudge p50 {row[3]:5.2f} s p95 {row[4]:5.2f} s | {row[1] / row[3]:5.1f}x",
                flush=True,
            )

        mix = []
        for index in range(args.burst):
            problem = problems[index % len(problems)]
            wrong = index % 3 == 2 and problem.mistakes
            mix.append((problem, problem.mistakes[0].source if wrong else problem.reference_source))
        pool.wait_until_warm()
        with MemorySampler() as memory, ThreadPoolExecutor(args.pool) as executor:
            started = time.monotonic()
            results = list(executor.map(lambda item: timed_grade(item[0], item[1], pool), mix))
            burst_seconds = time.monotonic() - started
        per_minute = len(mix) / burst_seconds * 60
        verdicts = {
            v: sum(1 for _, x in results if x == v) for v in sorted({x for _, x in results})
        }
        print(
            f"burst: {len(mix)} submissions in {burst_seconds:.1f} s = {per_minute:.1f} per minute; peak extra memory {memory.peak_mib:.0f} MiB; verdicts {verdicts}"
        )
    finally:
        pool.close()

    if args.write:
        write_report(rows, prepare, args, burst_seconds, per_minute, memory.peak_mib, len(mix))


def write_report(
    rows: list[tuple[str, float, float, float, float]],
    prepare: list[tuple[str, int, float]],
    args: argparse.Namespace,
    burst_seconds: float,
    per_minute: float,
    peak_mib: float,
    burst: int,
) -> None:
    versions = ", ".join(f"{k} {v}" for k, v in runtime_versions().items())
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.machine(),
    )
    lines = [
        "Measured by `make bench` (`bench/grading_latency.py --write`); every number in this block was printed by that run.",
        "",
        f"- Machine: {os.cpu_count()} cores ({cpu}), {round(int(Path('/proc/meminfo').read_text().split()[1]) / 2**20)} GiB, CPU only.",
        f"- Runtime: {versions}.",
        f"- Baseline: a fresh `python` child per submission, no sandbox, no pool, no compilation cache ({args.baseline_runs} runs per problem).",
        f"- jaxjudge: a warm pool of {args.pool} sandboxed children (libraries warmed up before they take work, from the warm-up's own compilation cache; no cache of trusted runs), {args.runs} runs per problem, one at a time, pool warm.",
        "- Latency: `grade()` wall time in-process (not yet through the HTTP server), for the problem's reference graded as a submission (the samples and one random variant's hidden cases).",
        "",
        "| problem | baseline p50 | baseline p95 | jaxjudge p50 | jaxjudge p95 | speed-up (p50) |",
        "|---|---|---|---|---|---|",
    ]
    for slug, b50, b95, f50, f95 in rows:
        lines.append(
            f"| `{slug}` | {b50:.2f} s | {b95:.2f} s | {f50:.2f} s | {f95:.2f} s | {b50 / f50:.1f}x |"
        )
    lines += [
        "",
        f"Burst: {burst} mixed submissions (every problem; one in three a known mistake) through the pool with {args.pool} concurrent gradings:"
        f" {burst_seconds:.1f} s, **{per_minute:.1f} graded submissions per minute**; peak extra memory on the machine {peak_mib:.0f} MiB.",
        "",
        "Trusted runs (`jaxjudge prepare`, once per problem version): the reference and every known mistake on the samples and on every variant's hidden cases, one child per problem.",
        "",
        "| problem | case runs | seconds |",
        "|---|---|---|",
        *(f"| `{slug}` | {cases} | {seconds:.1f} s |" for slug, cases, seconds in prepare),
        f"| all (one after another) | {sum(c for _, c, _ in prepare)} | {sum(t for _, _, t in prepare):.1f} s |",
        "",
        "Reproduce: `make bench` (about 27 minutes on 2 cores, with the server benchmarks below).",
    ]
    write_block("grading_latency", lines)


if __name__ == "__main__":
    main()
