"""The worker meets its grader through ``Grader`` (app/grading/runs.py) alone: what the
grader may tell it while grading goes down as hooks (a submit's samples, stored for the
page at once; nothing for a run), and what it decides comes back beside the report (a
held run's draw, recorded with the verdict)."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.grading import queue
from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from app.models import Submission
from grader.child.verdicts import Mode, Verdict
from grader.grade import GradingOutcome
from grader.judging.judge import GradingHooks
from grader.judging.report import CaseReport, GradeReport
from grader.problems.problem import Problem

WORKER = "test:1-1:0"
SAMPLE = CaseReport(name="small", hidden=False, verdict=Verdict.ACCEPTED)


def accept(problem: Problem, code: str, mode: Mode, device: str, draw: int) -> GradeReport:
    return GradeReport(problem=problem.slug, mode=mode, verdict=Verdict.ACCEPTED, score=1.0)


def _samples_json(submission_id: int) -> str | None:
    with session_scope() as session:
        return session.get_one(Submission, submission_id).samples_json


class Telling(FunctionGrader):
    """Tells its samples through the hooks it is given, then decides ``draw``."""

    def __init__(self, draw: int | None) -> None:
        super().__init__(accept)
        self.draw = draw
        self.told: list[bool] = []

    def grade(
        self, problem: Problem, job: queue.GradingJob, device: str, hooks: GradingHooks
    ) -> GradingOutcome:
        self.told.append(hooks.samples_seen is not None)
        if hooks.samples_seen is not None:
            hooks.samples_seen([SAMPLE])
            deadline = time.monotonic() + 10  # the hidden cases run meanwhile
            while _samples_json(job.id) is None and time.monotonic() < deadline:
                time.sleep(0.05)
        graded = super().grade(problem, job, device, hooks)
        return replace(graded, draw_to_record=self.draw)


def _submission(mode: Mode) -> tuple[int, int | None]:
    with session_scope() as session:
        ada = accounts.create_user(session=session, name="ada", password="long test password")
        row = submission_data.create_submission(
            session=session,
            user=ada,
            problem="scan-microbatched-grads",
            code="x",
            mode=mode,
            max_queued=9,
        )
        return row.id, row.hidden_draw


@pytest.mark.parametrize(("mode", "told"), [(Mode.SUBMIT, True), (Mode.RUN, False)])
def test_a_submit_s_samples_are_stored_while_it_grades_and_a_run_s_are_not(
    database: str, mode: Mode, told: bool
) -> None:
    submission_id, _draw = _submission(mode)
    grader = Telling(draw=None)
    assert EmbeddedWorkers(threads=1, grader=grader).work_once(WORKER)
    assert grader.told == [told]
    stored = _samples_json(submission_id)
    assert (stored is not None and '"small"' in stored) is told


def test_the_draw_a_grading_decides_is_recorded_and_none_keeps_the_stored_one(
    database: str,
) -> None:
    submission_id, stored_draw = _submission(Mode.SUBMIT)
    assert EmbeddedWorkers(threads=1, grader=Telling(draw=None)).work_once(WORKER)
    with session_scope() as session:
        row = session.get_one(Submission, submission_id)
        assert (row.verdict, row.hidden_draw) == ("accepted", stored_draw)
        row.status, row.verdict = "queued", None  # graded again: a held run's draw this time
    assert EmbeddedWorkers(threads=1, grader=Telling(draw=3)).work_once(WORKER)
    with session_scope() as session:
        row = session.get_one(Submission, submission_id)
        assert (row.verdict, row.hidden_draw) == ("accepted", 3)
