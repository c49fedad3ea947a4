"""A learner's activity claimed by another grading process ends the run this one holds
for them (app/grading/held_runs.py), on SQLite and PostgreSQL."""

from __future__ import annotations

from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.grading import held_runs, queue
from app.models import Submission, User
from app.vocabulary import SubmissionStatus
from grader.parking import Ticket

CODE = "def solve(x, scale):\n    return x * scale\n"
PROCESS = "host:1234-abc"


def _learner_with_a_run(name: str = "held") -> tuple[int, int]:
    with session_scope() as session:
        user = accounts.create_user(session=session, name=name, password="long test password")
        run = submission_data.create_submission(
            session=session, user=user, problem="p", code=CODE, mode="run", max_queued=100
        )
        run.status = SubmissionStatus.DONE  # graded: its child is the one held
        return user.id, run.id


def _submit(user_id: int, code: str = CODE, mode: str = "submit") -> int:
    with session_scope() as session:
        user = session.get_one(User, user_id)
        return submission_data.create_submission(
            session=session, user=user, problem="p", code=code, mode=mode, max_queued=100
        ).id


def _held(user_id: int, run_id: int, version: int | None) -> dict[str, tuple[Ticket, int]]:
    ticket = Ticket(str(user_id), str(version), "cpu", Ticket.digest(CODE))
    return {str(user_id): (ticket, run_id)}


def _version_of(submission_id: int) -> int | None:
    with session_scope() as session:
        return session.get_one(Submission, submission_id).problem_version_id


def _ended(held: dict[str, tuple[Ticket, int]]) -> set[str]:
    with session_scope() as session:
        return set(held_runs.superseded(session, held, PROCESS))


def test_the_held_codes_submission_queued_or_claimed_here_keeps_the_run(database: str) -> None:
    user, run = _learner_with_a_run()
    held = _held(user, run, _version_of(run))
    assert _ended(held) == set()  # nothing since the run
    submission = _submit(user)
    assert _ended(held) == set()  # queued: it may come here
    with session_scope() as session:
        claimed = queue.claim(session, worker=f"{PROCESS}:0", lease_seconds=60)
        session.commit()
        assert claimed is not None and claimed.id == submission
    assert _ended(held) == set()  # in this process's hands


def test_the_same_submission_claimed_by_another_process_ends_it(database: str) -> None:
    user, run = _learner_with_a_run()
    held = _held(user, run, _version_of(run))
    _submit(user)
    with session_scope() as session:
        assert queue.claim(session, worker="other-host:99-x:0", lease_seconds=60) is not None
        session.commit()
    assert _ended(held) == {str(user)}


def test_other_code_or_another_run_ends_it_wherever_it_waits(database: str) -> None:
    user, run = _learner_with_a_run()
    held = _held(user, run, _version_of(run))
    _submit(user, code=CODE + "# edited\n")
    assert _ended(held) == {str(user)}
    user_two, run_two = _learner_with_a_run("held2")
    held_two = _held(user_two, run_two, _version_of(run_two))
    _submit(user_two, mode="run")
    assert _ended(held_two) == {str(user_two)}
