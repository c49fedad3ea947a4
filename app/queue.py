"""The submission queue: rows of `submissions`, claimed by workers with a lease.

A worker claims the oldest claimable submission with a conditional UPDATE that
only succeeds if the row is still claimable, so two workers can never both
win it (atomic on SQLite; on PostgreSQL the candidate is also picked with
`FOR UPDATE SKIP LOCKED`). The claim is a lease: the worker renews it while
grading; if the worker dies, the lease expires and the submission is claimable
again. Completing requires still holding the lease, so a submission whose
lease moved on is never recorded twice.

Claimable: queued, or running with an expired lease; and its user has no
other submission running under a live lease (one at a time per learner).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, exists, func, or_, select, update
from sqlalchemy.orm import Session, aliased

from app.models import Submission, utcnow

MAX_ATTEMPTS = 3


def _rows(session: Session, statement: Any) -> int:
    """Execute an UPDATE, commit, and say how many rows it changed."""
    result = cast(
        CursorResult[Any], session.execute(statement.execution_options(synchronize_session=False))
    )
    session.commit()
    return result.rowcount


def _claimable(now: datetime) -> ColumnElement[bool]:
    other = aliased(Submission)
    busy_user = exists().where(
        other.user_id == Submission.user_id,
        other.id != Submission.id,
        other.status == "running",
        other.lease_expires_at > now,
    )
    return and_(
        or_(
            Submission.status == "queued",
            and_(Submission.status == "running", Submission.lease_expires_at <= now),
        ),
        ~busy_user,
    )


def claim(session: Session, *, worker: str, lease_seconds: int) -> Submission | None:
    """Claim the oldest claimable submission for `worker`, or None."""
    now = utcnow()
    candidates = select(Submission.id).where(_claimable(now)).order_by(Submission.id).limit(5)
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    for submission_id in session.scalars(candidates).all():
        won = _rows(
            session,
            update(Submission)
            .where(Submission.id == submission_id, _claimable(now))
            .values(
                status="running",
                lease_owner=worker,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                started_at=now,
                attempts=Submission.attempts + 1,
            ),
        )
        if won == 1:
            return session.get(Submission, submission_id, populate_existing=True)
    return None


def _held_by(submission_id: int, worker: str) -> ColumnElement[bool]:
    """The submission is running under `worker`'s lease."""
    return and_(
        Submission.id == submission_id,
        Submission.lease_owner == worker,
        Submission.status == "running",
    )


def renew(session: Session, *, submission_id: int, worker: str, lease_seconds: int) -> bool:
    """Extend the lease; False if it was lost (then the result must be dropped)."""
    statement = (
        update(Submission)
        .where(_held_by(submission_id, worker))
        .values(lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
    )
    return _rows(session, statement) == 1


def complete(
    session: Session,
    *,
    submission_id: int,
    worker: str,
    verdict: str,
    score: float,
    result_json: str,
) -> bool:
    """Record the result if `worker` still holds the lease; exactly one result per submission."""
    statement = (
        update(Submission)
        .where(_held_by(submission_id, worker))
        .values(
            status="done",
            verdict=verdict,
            score=score,
            result_json=result_json,
            finished_at=utcnow(),
            lease_owner=None,
            lease_expires_at=None,
        )
    )
    return _rows(session, statement) == 1


def queue_position(session: Session, submission: Submission) -> int:
    """1 for the next to be claimed (ignoring the one-per-learner rule)."""
    ahead = session.scalar(
        select(func.count()).where(Submission.status == "queued", Submission.id < submission.id)
    )
    return 1 + (ahead or 0)
