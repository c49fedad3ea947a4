"""Moving the grading runtime (app/grading/runtime_diff.py): which stored verdicts a
candidate would change, and applying them once it serves. A stand-in grader plays the
candidate here; docs/operations.md records the real run for the jax 0.12 upgrade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import accounts, catalog
from app.errors import ConflictError
from app.grading import runtime_diff
from app.models import PastVerdict, Submission
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import CaseReport, GradeReport
from grader.problems.problem import Problem
from tests.app.conftest import BANK_SLUG

SERVING = {"jax": "0.10.2", "python": "3.11.7"}
CANDIDATE = {"jax": "0.12.0.1", "python": "3.12.1"}


def stored(session: Session, user_id: int, version_id: int, code: str, verdict: Verdict) -> int:
    submission = Submission(
        user_id=user_id,
        problem=BANK_SLUG,
        mode=Mode.SUBMIT.value,
        code=code,
        status=SubmissionStatus.DONE,
        verdict=verdict.value,
        score=1.0 if verdict is Verdict.ACCEPTED else 0.0,
        result_json=json.dumps(
            {"verdict": verdict.value, "cases": [{"name": "tiny", "verdict": verdict.value}]}
        ),
        problem_version_id=version_id,
        hidden_draw=7,
    )
    session.add(submission)
    session.flush()
    return submission.id


@pytest.fixture
def history(private_bank: Path) -> dict[str, int]:
    """Three accepted and three rejected submits by one learner, on the live version."""
    with session_scope() as session:
        learner = accounts.create_user(session=session, name="ada", password="long test password")
        live = catalog.live_version(session=session, slug=BANK_SLUG)
        assert live is not None
        ids = {}
        for n in range(3):
            ids[f"good{n}"] = stored(session, learner.id, live.id, f"# good {n}", Verdict.ACCEPTED)
            ids[f"bad{n}"] = stored(
                session, learner.id, live.id, f"# bad {n}", Verdict.WRONG_ANSWER
            )
        return ids


def candidate(problem: Problem, item: runtime_diff.StoredVerdict) -> GradeReport:
    """Accepts what holds 'good', except 'good 2', whose hidden case now fails; and
    'bad 1' is now accepted. Checks each stored submission meets its own inputs."""
    assert item.hidden_draw == 7 and problem.slug == BANK_SLUG
    accepted = ("good" in item.code and "2" not in item.code) or item.code == "# bad 1"
    if accepted:
        return GradeReport(
            problem=problem.slug, mode=Mode.SUBMIT, verdict=Verdict.ACCEPTED, score=1.0
        )
    failing = CaseReport(
        name="hidden-1", hidden=True, verdict=Verdict.WRONG_ANSWER, message="off by 3e-2"
    )
    return GradeReport(
        problem=problem.slug,
        mode=Mode.SUBMIT,
        verdict=Verdict.WRONG_ANSWER,
        score=0.0,
        cases=[failing],
    )


def make_report(per_problem: int | None) -> runtime_diff.RuntimeDiff:
    with session_scope() as session:
        chosen = runtime_diff.stored_verdicts(session, per_problem=per_problem, slugs=[BANK_SLUG])
        return runtime_diff.diff(session, chosen, candidate, serving=SERVING, candidate=CANDIDATE)


def test_a_sample_takes_the_newest_accepted_and_rejected_of_each_problem(
    history: dict[str, int],
) -> None:
    with session_scope() as session:
        chosen = runtime_diff.stored_verdicts(session, per_problem=1, slugs=[BANK_SLUG])
    assert sorted(item.submission_id for item in chosen) == sorted(
        [history["good2"], history["bad2"]]
    )


def test_the_report_names_each_verdict_that_would_change_and_why(history: dict[str, int]) -> None:
    report = make_report(None)
    assert report.graded == 6 and report.failures == []
    changes = {change.submission_id: change for change in report.changes}
    assert set(changes) == {history["good2"], history["bad1"]}
    assert changes[history["good2"]].new_verdict == "wrong_answer"
    assert changes[history["good2"]].why == "now a hidden case: wrong_answer (off by 3e-2)"
    assert changes[history["bad1"]].why.startswith("now accepted; before, case 'tiny'")
    lines = "\n".join(report.lines())
    assert "jax 0.10.2 -> 0.12.0.1" in lines and "6 graded, 2 would change" in lines
    again = runtime_diff.RuntimeDiff.from_json(json.loads(json.dumps(report.to_json())))
    assert again == report


def test_a_problem_the_candidate_cannot_grade_is_reported_not_compared(
    history: dict[str, int],
) -> None:
    def broken(problem: Problem, item: runtime_diff.StoredVerdict) -> GradeReport:
        raise RuntimeError("the reference failed on case 'tiny': AttributeError")

    with session_scope() as session:
        chosen = runtime_diff.stored_verdicts(session, per_problem=None, slugs=[BANK_SLUG])
        report = runtime_diff.diff(session, chosen, broken, serving=SERVING, candidate=CANDIDATE)
    assert report.changes == [] and [p.slug for p in report.failures] == [BANK_SLUG]
    assert "CANNOT GRADE" in "\n".join(report.lines())


def test_applying_waits_for_the_switch_then_keeps_every_replaced_verdict(
    history: dict[str, int],
) -> None:
    report = make_report(None)
    with session_scope() as session, pytest.raises(ConflictError, match="switch"):
        runtime_diff.apply(session, report, serving=SERVING)
    with session_scope() as session:
        # A verdict that moved since the report (a regrade, say) is left alone.
        session.get_one(Submission, history["bad1"]).verdict = Verdict.TIME_LIMIT_EXCEEDED.value
    with session_scope() as session:
        assert runtime_diff.apply(session, report, serving=CANDIDATE) == 1
    with session_scope() as session:
        moved = session.get_one(Submission, history["good2"])
        assert (moved.verdict, moved.score) == ("wrong_answer", 0.0)
        assert json.loads(moved.result_json or "{}")["verdict"] == "wrong_answer"
        kept = session.scalars(
            select(PastVerdict).where(PastVerdict.submission_id == moved.id)
        ).one()
        assert (kept.verdict, kept.score) == ("accepted", 1.0)
        untouched = session.get_one(Submission, history["bad1"])
        assert untouched.verdict == Verdict.TIME_LIMIT_EXCEEDED.value
