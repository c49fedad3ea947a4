"""The queue's guarantees: ordered claims, leases, one result, one running per learner."""

from __future__ import annotations

import threading

import pytest

from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.errors import DomainError
from app.grading import queue
from app.models import Submission
from grader.parking import Ticket


def make_users_and_submissions(count: int, *, same_user: bool = False) -> list[int]:
    ids = []
    with session_scope() as session:
        users = [
            accounts.create_user(session=session, name=f"u{i}", password="long test password")
            for i in range(1 if same_user else count)
        ]
        for index in range(count):
            user = users[0 if same_user else index]
            ids.append(
                submission_data.create_submission(
                    session=session, user=user, problem="p", code="c", mode="submit", max_queued=100
                ).id
            )
    return ids


def test_claims_take_the_oldest_and_set_a_lease(database: str) -> None:
    first, second = make_users_and_submissions(2)
    with session_scope() as session:
        claimed = queue.claim(session, worker="w1", lease_seconds=60)
        assert claimed is not None
        assert claimed.id == first
        assert claimed.status == "running"
        assert claimed.lease_owner == "w1"
        assert claimed.attempts == 1
        assert queue.claim(session, worker="w2", lease_seconds=60).id == second  # type: ignore[union-attr]
        assert queue.claim(session, worker="w3", lease_seconds=60) is None


def test_a_submission_of_a_held_runs_code_is_claimed_first(database: str) -> None:
    """Its verdict costs little (grader/parking.py); the learner's runs and their other
    code wait their turn."""
    first, second, third, fourth = make_users_and_submissions(4)
    with session_scope() as session:
        rows = [session.get_one(Submission, row) for row in (first, second, third, fourth)]
        rows[1].mode = "run"  # a held learner's run: not first
        rows[2].code = "other code"  # a held learner's other code: not first
        session.commit()
        held = {
            row.user_id: Ticket(
                str(row.user_id), str(row.problem_version_id), "cpu", Ticket.digest("c")
            )
            for row in rows[1:]
        }
        order = [
            queue.claim(session, worker=f"w{n}", lease_seconds=60, first_of=held) for n in range(4)
        ]
        # Then the submits, oldest first, and the run last.
        assert [row.id for row in order if row is not None] == [fourth, first, third, second]


def test_submits_are_claimed_before_runs_each_oldest_first(database: str) -> None:
    """A learner submitting waits for about one grading, not behind the class's runs."""
    first, second, third, fourth = make_users_and_submissions(4)
    with session_scope() as session:
        for run in (first, third):
            session.get_one(Submission, run).mode = "run"
        session.commit()
        rows = [session.get_one(Submission, row) for row in (first, second, third, fourth)]
        assert [queue.queue_position(session, row) for row in rows] == [3, 1, 4, 2]
        order = [queue.claim(session, worker=f"w{n}", lease_seconds=60) for n in range(4)]
        assert [row.id for row in order if row is not None] == [second, fourth, first, third]


def test_one_running_submission_per_learner(database: str) -> None:
    first, second = make_users_and_submissions(2, same_user=True)
    with session_scope() as session:
        assert queue.claim(session, worker="w1", lease_seconds=60).id == first  # type: ignore[union-attr]
        assert queue.claim(session, worker="w2", lease_seconds=60) is None  # the learner is busy
        assert queue.complete(
            session,
            submission_id=first,
            worker="w1",
            verdict="accepted",
            score=1.0,
            result_json="{}",
        )
        assert queue.claim(session, worker="w2", lease_seconds=60).id == second  # type: ignore[union-attr]


def test_an_expired_lease_is_claimed_again_and_only_the_holder_records(database: str) -> None:
    (only,) = make_users_and_submissions(1)
    with session_scope() as session:
        assert (
            queue.claim(session, worker="dead", lease_seconds=-1) is not None
        )  # the worker "died"
        again = queue.claim(session, worker="alive", lease_seconds=60)
        assert again is not None
        assert again.id == only
        assert again.attempts == 2
        assert not queue.renew(session, submission_id=only, worker="dead", lease_seconds=60)
        assert not queue.complete(
            session,
            submission_id=only,
            worker="dead",
            verdict="accepted",
            score=1.0,
            result_json="{}",
        )
        assert queue.complete(
            session,
            submission_id=only,
            worker="alive",
            verdict="wrong_answer",
            score=0.0,
            result_json="{}",
        )
        assert not queue.complete(
            session,
            submission_id=only,
            worker="alive",
            verdict="accepted",
            score=1.0,
            result_json="{}",
        )
        row = session.get(Submission, only, populate_existing=True)
        assert row is not None
        assert (row.status, row.verdict) == ("done", "wrong_answer")


def test_concurrent_workers_never_claim_the_same_submission(database: str) -> None:
    ids = make_users_and_submissions(30)
    claimed: list[int] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        while True:
            with session_scope() as session:
                got = queue.claim(session, worker=name, lease_seconds=60)
                if got is None:
                    return
                with lock:
                    claimed.append(got.id)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claimed) == ids  # every submission exactly once


def test_queue_position_and_per_user_cap(database: str) -> None:
    ids = make_users_and_submissions(3, same_user=True)
    with session_scope() as session:
        rows = [session.get(Submission, i) for i in ids]
        assert [queue.queue_position(session, row) for row in rows if row] == [1, 2, 3]
        user = accounts.user_by_name(session=session, name="u0")
        assert user is not None
        with pytest.raises(DomainError, match="already have 3 submissions waiting"):
            submission_data.create_submission(
                session=session, user=user, problem="p", code="c", mode="run", max_queued=3
            )
