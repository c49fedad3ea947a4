"""Run, then Submit (grader/parking.py): a passing run's child waits, before any hidden
input, and the same learner's submission of the same code takes it: only then do a
secret draw's hidden cases reach it. Anything else discards it unseen. Hostile code
gains nothing over an ordinary submission: its verdict is the one the same code gets
graded afresh on the same draw. Each test starts sandboxed children (about 2 s each)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from grader import expected
from grader.child.verdicts import Mode, Verdict
from grader.grade import HeldRun, grade, run_and_hold
from grader.judging.feedback import learner_view
from grader.judging.report import GradeReport
from grader.judging.trusted import TrustedOutputs
from grader.parking import ParkingLot, Ticket
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold
from grader.running.sandbox import SandboxLauncher
from grader.running.supervise import NICE_WHILE_AHEAD, ProcessRunner, can_renice
from grader.running.timing import TimeLimits, process_tree, threads_of

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

CORRECT = "def solve(x, scale):\n    return x * scale\n"
LIMITS = TimeLimits(cpu_seconds=20.0, wall_seconds=30.0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("parking")
    scaffold("tiny", root)
    return load_problem(root / "problems" / "tiny")


@pytest.fixture(scope="module")
def trusted(tiny: Problem) -> TrustedOutputs:
    return expected.load_or_compute(tiny)


@pytest.fixture
def lot() -> Iterator[ParkingLot]:
    parking = ParkingLot(seconds=60, limit=2, min_available_mb=0)
    yield parking
    parking.close()


def hold(
    problem: Problem, trusted: TrustedOutputs, source: str, variant: int = 1
) -> tuple[GradeReport, HeldRun | None]:
    graded, held = run_and_hold(
        problem,
        source,
        device="cpu",
        runner=ProcessRunner(SandboxLauncher()),
        trusted=trusted,
        limits=LIMITS,
        variant=variant,
    )
    assert not graded.retry_later and graded.draw_to_record is None
    return graded.report, held


def ticket(source: str, owner: str = "7") -> Ticket:
    return Ticket(owner=owner, version="1", device="cpu", code_sha256=str(hash(source)))


def continued(
    lot: ParkingLot, problem: Problem, trusted: TrustedOutputs, source: str
) -> tuple[GradeReport, GradeReport, int]:
    """A run of ``source`` held and its submission taken: (run, submission, draw)."""
    run, held = hold(problem, trusted, source)
    assert held is not None, run.message
    lot.park(ticket(source), held)
    parked = lot.take(ticket(source))
    assert parked is not None
    graded = parked.verdict(60)
    assert graded is not None, parked.discarded
    assert graded.draw_to_record == held.variant  # the submission records the run's draw
    assert not graded.retry_later
    return run, graded.report, held.variant


def afresh(problem: Problem, trusted: TrustedOutputs, source: str, variant: int) -> GradeReport:
    runner = ProcessRunner(SandboxLauncher())
    return grade(problem, source, trusted=trusted, variant=variant, limits=LIMITS, runner=runner)


def test_a_passing_run_is_held_and_its_submission_graded_on_its_draw(
    lot: ParkingLot, tiny: Problem, trusted: TrustedOutputs
) -> None:
    run, report, variant = continued(lot, tiny, trusted, CORRECT)
    assert run.mode is Mode.RUN and run.accepted
    assert run.variant is None and not any(case.hidden for case in run.cases)
    assert report.mode is Mode.SUBMIT and report.accepted and report.continued_from_run
    assert report.variant == variant  # the draw is recorded: a regrade reproduces it
    ordinary = afresh(tiny, trusted, CORRECT, variant)
    assert [(c.name, c.hidden) for c in report.cases] == [
        (c.name, c.hidden) for c in ordinary.cases
    ]
    assert report.cpu_seconds is not None and report.cpu_limit_seconds == LIMITS.cpu_seconds
    shown = learner_view(report)
    assert not shown.continued_from_run and shown.variant is None and shown.seconds is None


def test_a_run_that_fails_a_sample_is_not_held(tiny: Problem, trusted: TrustedOutputs) -> None:
    run, held = hold(tiny, trusted, "def solve(x, scale):\n    return x\n")
    assert run.verdict is Verdict.WRONG_ANSWER and held is None
    assert run.diagnosis == "You returned x unchanged; multiply it by scale."


def test_other_code_another_learner_or_a_new_run_discards_the_held_child(
    lot: ParkingLot, tiny: Problem, trusted: TrustedOutputs
) -> None:
    _run, held = hold(tiny, trusted, CORRECT)
    assert held is not None
    lot.park(ticket(CORRECT), held)
    assert lot.take(ticket(CORRECT, owner="8")) is None  # another learner: not theirs
    edited = CORRECT + "# edited\n"
    assert lot.take(ticket(edited)) is None  # the learner's own other code ends it
    assert lot.take(ticket(CORRECT)) is None
    _run, again = hold(tiny, trusted, CORRECT)
    assert again is not None
    lot.park(ticket(CORRECT), again)
    lot.forget("7")  # a run that is not held (edited, failing) ends it too
    assert lot.take(ticket(CORRECT)) is None
    again.child.process.wait(timeout=10)  # killed, not left running


def test_no_hidden_input_reaches_a_held_child_before_its_submission(
    lot: ParkingLot, tiny: Problem, trusted: TrustedOutputs
) -> None:
    _run, held = hold(tiny, trusted, CORRECT)
    assert held is not None
    lot.park(ticket(CORRECT), held)
    time.sleep(1.5)  # time enough for a hidden phase of the tiny problem
    assert not held.child.collector.outcome.hidden_started
    parked = lot.take(ticket(CORRECT))  # the submission, recorded: now, and only now
    assert parked is not None
    graded = parked.verdict(60)
    assert graded is not None and graded.report.accepted
    assert held.child.collector.outcome.hidden_started
    assert any(case.hidden for case in graded.report.cases)


def test_a_held_child_let_go_never_saw_a_hidden_input(
    lot: ParkingLot, tiny: Problem, trusted: TrustedOutputs
) -> None:
    _run, held = hold(tiny, trusted, CORRECT)
    assert held is not None
    lot.park(ticket(CORRECT), held, since=5)
    lot.forget("7", "elsewhere", since=4)  # another run of theirs, already replaced: kept
    assert set(lot.held()) == {"7"}
    lot.forget("7", "elsewhere", since=5)
    assert lot.held() == {}
    held.child.process.wait(timeout=10)
    assert not held.child.collector.outcome.hidden_started


def test_held_runs_expire_and_the_oldest_goes_at_the_bound(
    tiny: Problem, trusted: TrustedOutputs
) -> None:
    lot = ParkingLot(seconds=1.0, limit=1, min_available_mb=0)
    try:
        _run, first = hold(tiny, trusted, CORRECT)
        assert first is not None
        lot.park(ticket(CORRECT, owner="1"), first)
        time.sleep(2.5)
        assert lot.take(ticket(CORRECT, owner="1")) is None
        first.child.process.wait(timeout=10)
        lot.seconds = 60
        _run, older = hold(tiny, trusted, CORRECT)
        _run, newer = hold(tiny, trusted, CORRECT)
        assert older is not None and newer is not None
        lot.park(ticket(CORRECT, owner="2"), older)
        lot.park(ticket(CORRECT, owner="3"), newer)  # at the bound: the older one goes
        assert set(lot.held()) == {"3"}
        older.child.process.wait(timeout=10)
    finally:
        lot.close()


def test_memory_running_short_lets_held_children_go(tiny: Problem, trusted: TrustedOutputs) -> None:
    lot = ParkingLot(seconds=60, limit=2, min_available_mb=1 << 40)  # always short
    try:
        _run, held = hold(tiny, trusted, CORRECT)
        assert held is not None
        lot.park(ticket(CORRECT), held)
        deadline = time.monotonic() + 10
        while lot.held() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert lot.held() == {}
        assert lot.take(ticket(CORRECT)) is None
    finally:
        lot.close()


# Hostile code behaving differently after its run: whatever it does, the verdict is the
# one the same code gets on the same draw graded afresh, and nothing it printed once
# the hidden inputs were in reaches the learner.
COUNTS_CALLS = """
calls = 0
def solve(x, scale):
    global calls
    calls += 1
    return x * scale if calls <= 1 else x
"""
READS_THE_TIME = """
import time
loaded = time.monotonic()
def solve(x, scale):
    return x * scale if time.monotonic() - loaded < 600 else x
"""
# The threads below act once the hidden phase has begun (the second call), whenever
# that is: what they do then is the same in both ways, however busy the machine.
THREAD_ACTS_LATER = """
import threading, time
calls = 0
printed = threading.Event()
def spy():
    while calls < 2:
        time.sleep(0.01)
    print("seen later", flush=True)
    printed.set()
def solve(x, scale):
    global calls
    calls += 1
    if calls == 1:
        threading.Thread(target=spy, daemon=True).start()
    else:
        printed.wait(20)
    return x * scale
"""
# The forger writes while the hidden cases are being answered, and they wait for it: a
# frame that came after DONE would be ignored, not caught, and prove nothing. It tries
# every descriptor: the result channel keeps the number it had in the grading process.
FORGES_FRAMES = """
import json, os, struct, threading, time
calls = 0
written = threading.Event()
def forge():
    while calls < 2:
        time.sleep(0.01)
    meta = json.dumps({"solution": 0, "case": 1, "program": None, "seconds": 0.0,
                       "outputs": []}).encode()
    for fd in range(3, 1024):  # the channel's number is the parent's: any
        try:
            os.write(fd, b"JJF1" + struct.pack("<B3xIQ", 4, len(meta), 0) + meta)
        except OSError:
            pass
    written.set()
def solve(x, scale):
    global calls
    calls += 1
    if calls == 1:
        threading.Thread(target=forge, daemon=True).start()
    else:
        written.wait(20)
    return x * scale
"""


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        (COUNTS_CALLS, Verdict.WRONG_ANSWER),
        (READS_THE_TIME, Verdict.ACCEPTED),
        (THREAD_ACTS_LATER, Verdict.ACCEPTED),
        (FORGES_FRAMES, Verdict.RUNTIME_ERROR),
    ],
    ids=["counts-calls", "reads-the-time", "thread-acts-later", "forges-frames"],
)
def test_code_that_changes_after_its_run_gains_nothing(
    lot: ParkingLot, tiny: Problem, trusted: TrustedOutputs, source: str, verdict: Verdict
) -> None:
    run, report, variant = continued(lot, tiny, trusted, source)
    assert run.accepted and "seen later" not in run.stdout
    ordinary = afresh(tiny, trusted, source, variant)
    assert report.verdict is ordinary.verdict is verdict
    assert [c.verdict for c in report.cases] == [c.verdict for c in ordinary.cases]
    shown = learner_view(report)
    assert "seen later" not in shown.stdout and not shown.hidden_output
    if source is THREAD_ACTS_LATER:  # staff see what it printed once the inputs were in
        assert "seen later" in report.hidden_output


@pytest.mark.skipif(not can_renice(), reason="this process may not give a niceness back")
def test_a_waiting_child_yields_the_cpu_and_its_submission_takes_it_back(
    tiny: Problem, trusted: TrustedOutputs
) -> None:
    _run, held = hold(tiny, trusted, CORRECT)
    assert held is not None
    try:
        child = held.child
        threads = threads_of(process_tree(child.process.pid))
        assert len(threads) > 2  # bubblewrap, the runtime and its threads
        child.prioritise(busy=False)
        assert {os.getpriority(os.PRIO_PROCESS, t) for t in threads} == {NICE_WHILE_AHEAD}
        child.prioritise(busy=True)
        assert {os.getpriority(os.PRIO_PROCESS, t) for t in threads} == {0}
    finally:
        held.child.close()
