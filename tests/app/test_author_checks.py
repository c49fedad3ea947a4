"""An author's check is a job for the grading workers (app/grading/author_checks.py): a
requested check is queued, one worker claims it, learners' submissions go first, a dead
worker's check is claimed again once its lease expires, progress renews the lease, and
only the worker holding the lease records the result."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from app.core.db import session_scope
from app.data import accounts, catalog
from app.data import submissions as submission_data
from app.grading import author_checks, preparation
from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from app.models import ProblemVersion, Submission, utcnow
from app.vocabulary import CheckStatus, SubmissionStatus
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from tests.app.conftest import BANK_SLUG

ONE, OTHER = "test:1-1:0", "test:2-2:0"


def queued_check() -> int:
    """The bank version's check, requested (and committed) as a page does."""
    with session_scope() as session:
        version = catalog.newest(session=session, slug=BANK_SLUG)
        assert version is not None and author_checks.request_check(session, version=version)
        return version.id


def version_of(version_id: int) -> ProblemVersion:
    with session_scope() as session:
        version = session.get_one(ProblemVersion, version_id)
        session.expunge(version)
        return version


def claim(worker: str, lease_seconds: int = 60) -> int | None:
    with session_scope() as session:
        return author_checks.claim_check(session, worker=worker, lease_seconds=lease_seconds)


def test_a_requested_check_is_queued_until_a_worker_claims_it_once(database: str) -> None:
    version_id = queued_check()
    assert version_of(version_id).check_status == CheckStatus.QUEUED
    with session_scope() as session:  # asked again while queued: refused
        version = session.get_one(ProblemVersion, version_id)
        assert not author_checks.request_check(session, version=version)
    assert claim(ONE) == version_id
    assert claim(OTHER) is None  # two claimers: one wins
    claimed = version_of(version_id)
    assert (claimed.check_status, claimed.check_lease_owner) == (CheckStatus.RUNNING, ONE)


def test_a_dead_worker_s_check_is_claimed_again_once_its_lease_expires(database: str) -> None:
    version_id = queued_check()
    assert claim(ONE, lease_seconds=-1) == version_id  # ONE died: its lease ran out
    assert claim(OTHER) == version_id
    with session_scope() as session:
        assert not author_checks.renew_check(session, version_id, worker=ONE, lease_seconds=60)
        assert author_checks.renew_check(session, version_id, worker=OTHER, lease_seconds=60)


def accept(problem: Problem, code: str, mode: Mode, device: str, draw: int) -> GradeReport:
    return GradeReport(problem=problem.slug, mode=mode, verdict=Verdict.ACCEPTED, score=1.0)


def test_a_waiting_submission_is_graded_before_a_check(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    version_id = queued_check()
    with session_scope() as session:
        ada = accounts.create_user(session=session, name="ada", password="long test password")
        submission_id = submission_data.create_submission(
            session=session, user=ada, problem=BANK_SLUG, code="x", mode=Mode.RUN, max_queued=9
        ).id
    ran: list[int] = []

    def run_check(version_id: int, **_: object) -> bool:
        ran.append(version_id)
        return True

    monkeypatch.setattr(author_checks, "run_check", run_check)
    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(accept))
    assert workers.work_once(ONE) and ran == []
    with session_scope() as session:
        assert session.get_one(Submission, submission_id).status == SubmissionStatus.DONE
    assert version_of(version_id).check_status == CheckStatus.QUEUED
    assert workers.work_once(ONE) and ran == [version_id]  # nothing else waits: the check
    assert not workers.work_once(ONE)


def failing_check(steal: bool) -> Any:
    """A check that reports a line (after another worker took the lease, if ``steal``)
    and then fails, as a broken problem does; it sees the lease its line renewed."""
    seen: dict[str, Any] = {}

    def check_problem(folder: object, *, trusted: bool, progress: Any) -> None:
        with session_scope() as session:
            version = catalog.newest(session=session, slug=BANK_SLUG)
            assert version is not None
            if steal:
                version.check_lease_owner = OTHER
        progress("reference: accepted")
        with session_scope() as session:
            version = catalog.newest(session=session, slug=BANK_SLUG)
            assert version is not None
            seen["expires"], seen["log"] = version.check_lease_expires_at, version.check_log
        raise RuntimeError("the problem is broken")

    check_problem.seen = seen  # type: ignore[attr-defined]
    return check_problem


@pytest.mark.parametrize("steal", [False, True])
def test_progress_renews_the_lease_and_only_its_holder_records_the_result(
    database: str, monkeypatch: pytest.MonkeyPatch, steal: bool
) -> None:
    import grader.check

    fake = failing_check(steal)
    monkeypatch.setattr(grader.check, "check_problem", fake)
    monkeypatch.setattr(preparation, "prepare_version", lambda version_id: None)
    version_id = queued_check()
    assert claim(ONE, lease_seconds=1) == version_id
    recorded = author_checks.run_check(version_id, worker=ONE, lease_seconds=600)
    version = version_of(version_id)
    seen = fake.seen
    if steal:  # the lease moved on: nothing of ONE's is written
        assert not recorded and seen["log"] == ""
        assert (version.check_status, version.check_lease_owner) == (CheckStatus.RUNNING, OTHER)
        return
    assert seen["log"] == "reference: accepted\n"
    assert seen["expires"] > utcnow() + timedelta(seconds=60)  # the line renewed the lease
    assert recorded and version.check_status == CheckStatus.FAILED
    assert "the problem is broken" in (version.check_json or "")
    assert version.check_lease_owner is None and version.check_lease_expires_at is None
