"""How much a submission can learn of its hidden inputs, channel by channel (not a test).

Every number a learner's code chooses and the feedback repeats is a channel. This
measures what is left, per submission, with the code that decides it:

- **per hidden case**: the learner views of one hidden case (grader/judging/feedback.py
  ``learner_view``) over every verdict and kind of mismatch a child can cause,
  while every field the learner's code controls (its shape, a leaf path, an
  exception's name and message, the error's size, the time) is drawn at random:
  the count of distinct views is the case's alphabet, log2 of it its bits;
- **per submission**: which known mistake the diagnosis names (one of the
  problem's mistakes, or none), which requirement rule a program broke;
- **timing**: when the verdict arrives. One fixed submission is graded ``--runs``
  times through a warm pool; the spread of the grading's wall time, and the
  one-second resolution of the API's timestamps, against the wall-clock backstop,
  give how many arrival times a learner can tell apart.

The sum is an upper bound: a stop (time, memory) skips every later case, and a
variant is redrawn for every submission, so what is learned is about inputs the
next submission does not meet.

    .venv/bin/python -m bench.feedback_channels [--runs 8] [--write]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import string
import tempfile
from pathlib import Path

from bench.blocks import write_block
from grader import calibration
from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT
from grader.grade import grade
from grader.judging.compare import Failure
from grader.judging.feedback import learner_view
from grader.judging.report import CaseReport, GradeReport
from grader.problems.problem import Problem, load_problem, problem_folders
from grader.problems.scaffold import scaffold
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher

SECURITY = PROJECT_ROOT / "docs" / "security.md"
# Verdicts one case can carry (the others belong to the whole submission).
CASE_VERDICTS = (
    Verdict.ACCEPTED,
    Verdict.WRONG_ANSWER,
    Verdict.RUNTIME_ERROR,
    Verdict.TIME_LIMIT_EXCEEDED,
    Verdict.MEMORY_LIMIT_EXCEEDED,
    Verdict.OUTPUT_LIMIT_EXCEEDED,
    Verdict.SKIPPED,
)


def _noise(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12))


def hidden_views(expected_shapes: dict[str, str] | None, draws: int = 200) -> int:
    """Distinct learner views of one hidden case, every learner-chosen field random."""
    rng = random.Random(0)
    seen: set[str] = set()
    for verdict in CASE_VERDICTS:
        failures = list(Failure) if verdict is Verdict.WRONG_ANSWER else [None]
        for failure in failures:
            for _ in range(draws):
                case = CaseReport(
                    name="hidden-case",
                    hidden=True,
                    verdict=verdict,
                    failure=failure.value if failure else None,
                    seconds=rng.random() * 30,
                    max_abs_error=rng.random(),
                    max_rel_error=rng.random(),
                    expected_shape=next(iter((expected_shapes or {}).values()), None),
                    actual_shape=f"(0, {rng.randrange(10**6)}, {rng.randrange(10**6)})",
                    expected_shapes=expected_shapes,
                    leaf=f"params/{_noise(rng)}",
                    exception=_noise(rng),
                    message=f"{_noise(rng)}: {rng.random()}",
                )
                report = GradeReport(problem="p", mode="submit", verdict=verdict, score=0.0)
                report.cases = [case]
                seen.add(json.dumps(learner_view(report).cases[0].model_dump(), sort_keys=True))
    return len(seen)


def rules(problem: Problem) -> int:
    """Which requirement rule a program broke, or none (1 when there are none)."""
    if not problem.has_requirements:
        return 1
    structure = problem.config.structure
    count = 1 + (not problem.config.allow_host_callbacks) + 1  # none, callbacks, untraced
    if structure is not None:
        count += len(structure.require) + len(structure.forbid) + len(structure.exactly)
    return count + (problem.config.memory_budget is not None)


def timing_spread(runs: int) -> float:
    """Standard deviation of one fixed grading's wall time, through a warm pool."""
    with tempfile.TemporaryDirectory() as root:
        scaffold("tiny", Path(root))
        tiny = load_problem(Path(root) / "problems" / "tiny")
        pool = WarmPool(SandboxLauncher(warm_up=True), size=1, memory_mb=2048)
        try:
            pool.wait_until_warm()
            source = "def solve(x, scale):\n    return x * scale\n"
            grade(tiny, source, runner=pool, variant=0)  # the first one compiles the warm-up
            seconds = []
            for _ in range(runs):
                pool.wait_until_warm()
                report = grade(tiny, source, runner=pool, variant=0)
                seconds.append(report.seconds or 0.0)
        finally:
            pool.close()
    return statistics.stdev(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    spread = timing_spread(args.runs)
    resolution = max(1.0, 4 * spread)  # timestamps to the second; +-2 sigma apart
    lines = [
        "| problem | hidden cases | views per case | diagnoses | rule broken | arrival times"
        " | bits per submission (at most) |",
        "|---|---|---|---|---|---|---|",
    ]
    totals = []
    for folder in problem_folders():
        problem = load_problem(folder)
        hidden = problem.case_bank.for_variant(0)
        views = max(hidden_views(_shapes_of(problem)), hidden_views(None))
        diagnoses = len(problem.mistakes) + 1
        limits = calibration.limits_for(problem, "cpu")
        arrivals = max(1, math.floor(limits.wall_seconds / resolution))
        bits = (
            len(hidden) * math.log2(views)
            + math.log2(diagnoses)
            + math.log2(rules(problem))
            + math.log2(arrivals)
        )
        totals.append(bits)
        lines.append(
            f"| `{problem.slug}` | {len(hidden)} | {views} ({math.log2(views):.2f} bits) |"
            f" {diagnoses} | {rules(problem)} | {arrivals} | {bits:.1f} |"
        )
    lines += [
        "",
        f"Measured {args.runs} gradings of one fixed submission through a warm pool: the"
        f" wall time's standard deviation is {spread * 1000:.0f} ms, so arrival times are"
        f" told apart at {resolution:.1f} s (the API's timestamps are to the second) over"
        " each problem's wall-clock backstop. Median over the bank:"
        f" {statistics.median(totals):.1f} bits per submission, at most.",
    ]
    print("\n".join(lines))
    if args.write:
        write_block("feedback_channels", lines, SECURITY)


def _shapes_of(problem: Problem) -> dict[str, str] | None:
    """A hidden case's expected shapes as the statement fixes them (None for trees)."""
    if problem.tree_outputs:
        return None
    return {output.name: "(n,)" for output in problem.parts[0].outputs}


if __name__ == "__main__":
    main()
