"""Time limits measure the submission, not the machine (grader/running/timing.py,
grader/running/supervise.py): CPU time of the whole sandbox with a wall-clock backstop, and a
time-out on an overloaded machine confirmed on a quiet child. The fast part drives
``run_retrying`` with stand-in children; the rest grades in real sandboxes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from grader.child.verdicts import Verdict
from grader.config import settings
from grader.grade import grade, measure_reference
from grader.judging.job import Job, RunOutcome, Solution, SolutionOutcome
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold
from grader.running.supervise import StartedChild, run_retrying
from grader.running.timing import (
    TICKS,
    SchedTimes,
    TimeLimits,
    process_tree,
    tree_cpu_seconds,
)

JOB = Job("solve", 1, (Solution("s", "pass"),), (), 5.0, 2048)


class Child:
    """Stands in for a StartedChild: returns a prepared outcome."""

    def __init__(self, outcome: RunOutcome) -> None:
        self.outcome = outcome

    def run(self, job: Job, judge: object = None, pause: object = None) -> RunOutcome:
        return self.outcome


def timed_out(*, starved: bool, limit: str = "wall") -> RunOutcome:
    return RunOutcome([SolutionOutcome()], timed_out=True, time_limit=limit, starved=starved)


def test_a_time_out_while_the_machine_was_overloaded_is_confirmed_on_a_quiet_child() -> None:
    asked: list[bool] = []
    quiet = RunOutcome([SolutionOutcome()], finished=True)
    given: list[Job] = []

    class Quiet(Child):
        def run(self, job: Job, judge: object = None, pause: object = None) -> RunOutcome:
            given.append(job)
            return quiet

    def start(boosted: bool) -> StartedChild:
        asked.append(boosted)
        return Quiet(quiet)  # type: ignore[return-value]

    first = Child(timed_out(starved=True))
    outcome = run_retrying(first, start, JOB)  # type: ignore[arg-type]
    assert asked == [True] and outcome is quiet and outcome.confirmed
    # A longer wall clock for the confirmation, the same CPU budget.
    assert given[0].wall_seconds > JOB.wall_seconds and given[0].cpu_seconds == JOB.cpu_seconds


def test_a_time_out_on_a_quiet_machine_is_final() -> None:
    def start(boosted: bool) -> StartedChild:
        raise AssertionError("a time-out on a quiet machine must not be run again")

    first = timed_out(starved=False, limit="cpu")
    assert run_retrying(Child(first), start, JOB) is first  # type: ignore[arg-type]


def test_a_confirmation_is_not_confirmed_again() -> None:
    started: list[bool] = []
    still = timed_out(starved=True)

    def start(boosted: bool) -> StartedChild:
        started.append(boosted)
        return Child(still)  # type: ignore[return-value]

    outcome = run_retrying(Child(timed_out(starved=True)), start, JOB)  # type: ignore[arg-type]
    assert started == [True] and outcome.timed_out and outcome.confirmed


def test_waiting_more_than_running_is_what_starved_means() -> None:
    assert SchedTimes(ran=1_000, waited=3_000).mostly_waiting
    assert not SchedTimes(ran=3_000, waited=1_000).mostly_waiting
    later, earlier = SchedTimes(5_000, 9_000), SchedTimes(4_000, 1_000)
    assert later.since(earlier) == SchedTimes(1_000, 8_000)


def test_the_backstop_is_generous_and_never_below_the_problems_wall_seconds() -> None:
    assert TimeLimits.for_budget(10.0, 30.0) == TimeLimits(10.0, 30.0)
    assert TimeLimits.for_budget(20.0, 30.0) == TimeLimits(20.0, 60.0)


def test_a_process_trees_cpu_time_counts_its_children() -> None:
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {busy!r}]); import time; time.sleep(0.5)",
        ]
    )
    try:
        time.sleep(0.3)
        assert len(process_tree(parent.pid)) >= 2  # the parent and its busy child
        deadline = time.monotonic() + 10
        while tree_cpu_seconds(parent.pid) < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tree_cpu_seconds(parent.pid) >= 0.5  # the child's, reaped into the parent's
    finally:
        parent.wait()


def test_a_process_trees_cpu_time_counts_every_thread() -> None:
    """Measured against the main thread's own time: the ratio, not the clock, so a busy
    machine changes nothing."""
    process = subprocess.Popen([sys.executable, "-c", THREADS_SPIN + "solve(None, None)\n"])
    try:
        deadline = time.monotonic() + 30
        while tree_cpu_seconds(process.pid) < 2.0 and time.monotonic() < deadline:
            time.sleep(0.05)
        main_thread = f"/proc/{process.pid}/task/{process.pid}/stat"
        with open(main_thread) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        main_seconds = (int(fields[11]) + int(fields[12])) / TICKS
        total = tree_cpu_seconds(process.pid)
        assert total >= 2.0
        assert total > 2 * main_seconds  # four equal threads: about four times the main one
    finally:
        process.kill()
        process.wait()


CORRECT = "def solve(x, scale):\n    return x * scale\n"
SPIN = "def solve(x, scale):\n    while True:\n        pass\n"
THREADS_SPIN = """
import threading
def solve(x, scale):
    def spin():
        while True:
            pass
    for _ in range(3):
        threading.Thread(target=spin, daemon=True).start()
    spin()
"""
SLEEP = "import time\ndef solve(x, scale):\n    time.sleep(600)\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("timing")
    scaffold("tiny", root)
    return load_problem(root / "problems" / "tiny")


@contextlib.contextmanager
def cpu_hogs(count: int = 2) -> Iterator[None]:
    """CPU-bound processes beside the grading, as a class's load makes."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@pytest.fixture
def two_cpu_hogs() -> Iterator[None]:
    with cpu_hogs(2):
        yield


@pytest.mark.slow
@pytest.mark.sandbox
def test_spinning_stops_at_the_cpu_limit_long_before_the_wall_clock(tiny: Problem) -> None:
    report = grade(tiny, SPIN, limits=TimeLimits(2.0, 60.0))
    assert report.verdict is Verdict.TIME_LIMIT_EXCEEDED
    # The CPU budget stopped it (the wall clock's would say "wall-clock"), just past it.
    assert "CPU time" in report.cases[0].message
    assert report.cpu_seconds is not None and 2.0 <= report.cpu_seconds < 6.0


@pytest.mark.slow
@pytest.mark.sandbox
def test_cpu_time_counts_every_thread_of_the_sandbox(tiny: Problem) -> None:
    """Stopped by its CPU budget, not the wall clock, however busy the machine (a busy
    machine may also have it confirmed on a quiet child, so its wall time says nothing)."""
    report = grade(tiny, THREADS_SPIN, limits=TimeLimits(4.0, 60.0))
    assert report.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert "CPU time" in report.cases[0].message
    # Every thread counts: the four spinning together used the budget, not the main one alone.
    assert report.cpu_seconds is not None and 4.0 <= report.cpu_seconds < 12.0


@pytest.mark.slow
@pytest.mark.sandbox
def test_calibration_measures_the_reference_without_a_cgroup(
    tiny: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Containers give no writable cgroup: the process tree is read instead, while it
    runs, even when the job has no CPU limit (measuring the reference for calibration)."""
    monkeypatch.setattr(settings, "use_cgroups", False)
    seconds = measure_reference(tiny, "cpu")
    assert seconds is not None and 0.0 < seconds < 30.0


@pytest.mark.slow
@pytest.mark.sandbox
def test_sleeping_stops_at_the_wall_clock_backstop(tiny: Problem) -> None:
    report = grade(tiny, SLEEP, limits=TimeLimits(10.0, 3.0))
    assert report.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert "wall-clock" in report.cases[0].message
    assert report.cpu_seconds is not None and report.cpu_seconds < 2.0


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_correct_submission_uses_the_same_cpu_time_on_a_busy_machine(
    tiny: Problem, two_cpu_hogs: None
) -> None:
    report = grade(tiny, CORRECT, limits=TimeLimits(10.0, 60.0))
    assert report.verdict is Verdict.ACCEPTED, report.message
    assert report.cpu_seconds is not None and report.cpu_seconds < 10.0


@pytest.mark.slow
@pytest.mark.sandbox
def test_check_passes_with_two_cpu_bound_processes_beside_it() -> None:
    """The problem whose reference, graded as a submission, once timed out under a
    class's load (issue 22). Its trusted outputs (no time limit: not what is tested)
    come from the run's cache, or are computed before the load starts; every grading
    that check makes runs beside the two hogs."""
    from grader import expected
    from grader.check import check_problem, render
    from grader.config import PROJECT_ROOT
    from grader.problems.problem import load_problem

    folder = PROJECT_ROOT / "problems" / "multisteps-with-schedule"
    expected.load_or_compute(load_problem(folder), "cpu")
    with cpu_hogs(2):
        result = check_problem(folder)
    assert result.ok, render(result, verbose=True)
    assert "reference and mistakes: outputs from this machine's cache" in result.notes
