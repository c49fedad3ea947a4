"""A learner's caps hold when requests arrive together, on SQLite and on PostgreSQL:
the count and the insert happen under one lock (app/data/submissions.py). Each thread
is a request with its own session, released at once by a barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.errors import TooManyError
from app.models import Submission, User
from grader.child.verdicts import Mode

SLUG = "scan-microbatched-grads"


def learner(name: str) -> User:
    with session_scope() as session:
        return accounts.create_user(session=session, name=name, password="long test password")


def all_at_once(attempts: int, attempt: Callable[[], None]) -> tuple[int, int]:
    """Run ``attempt`` in ``attempts`` threads released together: (admitted, refused)."""
    barrier = threading.Barrier(attempts)
    outcomes: list[str] = []
    lock = threading.Lock()

    def one() -> None:
        barrier.wait()
        try:
            attempt()
            result = "admitted"
        except TooManyError:
            result = "refused"
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=one) for _ in range(attempts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes.count("admitted"), outcomes.count("refused")


def submit(user: User, mode: Mode, *, max_queued: int, per_hour: int | None) -> None:
    with session_scope() as session:
        submission_data.create_submission(
            session=session,
            user=user,
            problem=SLUG,
            code="def f(): pass",
            mode=mode,
            max_queued=max_queued,
            max_submits_per_hour=per_hour,
        )


def test_ten_submits_at_once_at_57_of_60_admit_exactly_three(database: str) -> None:
    ada = learner("ada")
    with session_scope() as session:
        for _ in range(57):  # done ones: they count per hour, not as waiting
            session.add(
                Submission(user_id=ada.id, problem=SLUG, code="x", mode=Mode.SUBMIT, status="done")
            )
    admitted, refused = all_at_once(
        10, lambda: submit(ada, Mode.SUBMIT, max_queued=100, per_hour=60)
    )
    assert (admitted, refused) == (3, 7)
    with session_scope() as session:
        assert (
            submission_data.submits_in_the_last_hour(session=session, user_id=ada.id, problem=SLUG)
            == 60
        )


def test_twelve_runs_at_once_with_five_allowed_waiting_admit_five(database: str) -> None:
    grace = learner("grace")
    admitted, refused = all_at_once(
        12, lambda: submit(grace, Mode.RUN, max_queued=5, per_hour=None)
    )
    assert (admitted, refused) == (5, 7)
    with session_scope() as session:
        assert submission_data.queued_count(session=session, user_id=grace.id) == 5


def test_one_learners_cap_does_not_hold_up_another(database: str) -> None:
    first, second = learner("first"), learner("second")
    for user in (first, second):

        def attempt(user: User = user) -> None:
            submit(user, Mode.RUN, max_queued=2, per_hour=None)

        admitted, _ = all_at_once(4, attempt)
        assert admitted == 2


def test_a_refusal_says_which_cap_and_stores_nothing(database: str) -> None:
    ada = learner("ada")
    submit(ada, Mode.RUN, max_queued=1, per_hour=None)
    with pytest.raises(TooManyError, match="1 submissions waiting"):
        submit(ada, Mode.RUN, max_queued=1, per_hour=None)
    with session_scope() as session:
        assert submission_data.queued_count(session=session, user_id=ada.id) == 1
