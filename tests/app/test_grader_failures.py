"""When the grader fails (its runtime did not start, every GPU slot stayed busy), the
submission goes back to the queue for a later attempt instead of becoming the
learner's internal_error; a submission that keeps failing ends after MAX_ATTEMPTS
with a message, never in a loop."""

from __future__ import annotations

import pytest

from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.grading import queue, worker
from app.grading.runs import FunctionGrader, outcome_for
from app.grading.worker import EmbeddedWorkers
from app.models import Submission
from grader.child.verdicts import Mode, Verdict
from grader.grade import GradingOutcome
from grader.judging.judge import GradingHooks
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from grader.running.gpu_sharing import GpuBusyError

WORKER = "test:1-1:0"


def _submission() -> int:
    with session_scope() as session:
        ada = accounts.create_user(session=session, name="ada", password="long test password")
        return submission_data.create_submission(
            session=session,
            user=ada,
            problem="scan-microbatched-grads",
            code="x",
            mode="submit",
            max_queued=9,
        ).id


def runtime_never_starts(
    problem: Problem, code: str, mode: Mode, device: str, draw: int
) -> GradeReport:
    return GradeReport(
        problem=problem.slug,
        mode=mode,
        verdict=Verdict.INTERNAL_ERROR,
        score=0.0,
        message="The grader could not start the runtime; please try again.",
    )


class RuntimeNeverStarts(FunctionGrader):
    """Every grading fails the way a runtime that did not start fails: the grader's own
    fault, to be tried again later."""

    def __init__(self) -> None:
        super().__init__(runtime_never_starts)

    def grade(
        self, problem: Problem, job: queue.GradingJob, device: str, hooks: GradingHooks
    ) -> GradingOutcome:
        return GradingOutcome(super().grade(problem, job, device, hooks).report, retry_later=True)


def _row(submission_id: int) -> tuple[str, str | None, int, str | None]:
    with session_scope() as session:
        row = session.get_one(Submission, submission_id)
        return row.status, row.verdict, row.attempts, row.lease_owner


def test_a_grader_failure_puts_the_submission_back_until_attempts_run_out(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "RETRY_PAUSE_SECONDS", 0.0)
    submission_id = _submission()
    workers = EmbeddedWorkers(threads=1, grader=RuntimeNeverStarts())
    for attempt in range(1, queue.MAX_ATTEMPTS):
        assert workers.work_once(WORKER)
        assert _row(submission_id) == ("queued", None, attempt, None)
    assert workers.work_once(WORKER)  # the last attempt's error is recorded, with its message
    status, verdict, attempts, _owner = _row(submission_id)
    assert (status, verdict, attempts) == ("done", "internal_error", queue.MAX_ATTEMPTS)
    assert not workers.work_once(WORKER)  # nothing left: no loop


def test_put_back_needs_the_lease(database: str) -> None:
    submission_id = _submission()
    with session_scope() as session:
        assert queue.claim(session, worker=WORKER, lease_seconds=60) is not None
        assert not queue.put_back(session, Submission, submission_id, worker="someone:else:0")
        assert queue.put_back(session, Submission, submission_id, worker=WORKER)
    assert _row(submission_id)[0] == "queued"


def test_busy_gpu_slots_are_a_retry_not_an_error(database: str) -> None:
    def busy(problem: Problem, code: str, mode: Mode, device: str, draw: int) -> GradeReport:
        raise GpuBusyError("all 2 GPU sandbox slots stayed taken for 60 s")

    job = queue.GradingJob(1, "scan-microbatched-grads", None, "x", Mode.SUBMIT, 1, 0)
    graded = outcome_for(job, FunctionGrader(busy))
    assert graded.retry_later
    assert graded.report.verdict is Verdict.INTERNAL_ERROR
    assert "GPU" in graded.report.message
