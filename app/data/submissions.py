"""Data functions for submissions: keyword-only arguments, no HTTP concerns.

A learner's caps (submissions waiting, submits per hour) are counted and the new row
inserted under one lock on the learner's own row, taken by the transaction's first
write (``_serialise_for``): on PostgreSQL a row lock that concurrent requests of the
same learner queue behind (each counts again once the previous one committed); on
SQLite the database's write lock, which the first write takes before anything is
read. Counting first and inserting after, ten requests at once at 57 of 60 all got in.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.errors import TooManyError
from app.models import Submission, User, utcnow
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Mode, Verdict


def queued_count(*, session: Session, user_id: int) -> int:
    return (
        session.scalar(
            select(func.count()).where(
                Submission.user_id == user_id, Submission.status != SubmissionStatus.DONE
            )
        )
        or 0
    )


def submits_in_the_last_hour(*, session: Session, user_id: int, problem: str) -> int:
    since = utcnow() - timedelta(hours=1)
    return (
        session.scalar(
            select(func.count()).where(
                Submission.user_id == user_id,
                Submission.problem == problem,
                Submission.mode == Mode.SUBMIT,
                Submission.created_at >= since,
            )
        )
        or 0
    )


def _serialise_for(session: Session, user_id: int) -> None:
    """Hold the learner's row until the transaction ends: a write of nothing (id = id)
    that every database takes a lock for, so concurrent requests of one learner count
    and insert one after the other."""
    session.execute(update(User).where(User.id == user_id).values(id=User.id))


def create_submission(
    *,
    session: Session,
    user: User,
    problem: str,
    code: str,
    mode: str,
    max_queued: int,
    version_id: int | None = None,
    max_submits_per_hour: int | None = None,
    client_key: str | None = None,
) -> Submission:
    _serialise_for(session, user.id)
    if queued_count(session=session, user_id=user.id) >= max_queued:
        raise TooManyError(
            f"you already have {max_queued} submissions waiting; wait for one to finish"
        )
    if (
        mode == Mode.SUBMIT
        and max_submits_per_hour is not None
        and submits_in_the_last_hour(session=session, user_id=user.id, problem=problem)
        >= max_submits_per_hour
    ):
        raise TooManyError(
            f"you have submitted {max_submits_per_hour} times to this problem in the last hour;"
            " Run the samples meanwhile (not limited), and submit again later"
        )
    submission = Submission(
        user_id=user.id,
        problem=problem,
        code=code,
        mode=mode,
        problem_version_id=version_id,
        hidden_draw=secrets.randbelow(2**31),
        client_key=client_key,
    )
    session.add(submission)
    session.flush()
    return submission


def submission_by_key(*, session: Session, user: User, key: str) -> Submission | None:
    """The submission ``user`` made with this Idempotency-Key, if any."""
    return session.scalar(
        select(Submission).where(Submission.user_id == user.id, Submission.client_key == key)
    )


def has_solved(*, session: Session, user: User, problem: str) -> bool:
    return (
        session.scalar(
            select(Submission.id)
            .where(
                Submission.user_id == user.id,
                Submission.problem == problem,
                Submission.mode == Mode.SUBMIT,
                Submission.verdict == Verdict.ACCEPTED,
            )
            .limit(1)
        )
        is not None
    )


def submission_history(*, session: Session, user: User, problem: str) -> list[Submission]:
    """The learner's submits for a problem, newest first (runs are not attempts)."""
    return list(
        session.scalars(
            select(Submission)
            .where(
                Submission.user_id == user.id,
                Submission.problem == problem,
                Submission.mode == Mode.SUBMIT,
            )
            .order_by(Submission.id.desc())
        )
    )
