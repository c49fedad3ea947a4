"""The submission queue: rows of `submissions`, claimed by workers with a lease.

A worker claims the oldest claimable submit, else the oldest claimable run
(``claim`` says why), with a conditional UPDATE that
only succeeds if the row is still claimable, so two workers can never both
win it (atomic on SQLite; on PostgreSQL the candidate is also picked with
`FOR UPDATE SKIP LOCKED`). The claim is a lease: the worker renews it while
grading; if the worker dies, the lease expires and the submission is claimable
again. Completing requires still holding the lease, so a submission whose
lease moved on is never recorded twice.

Claimable: queued, or running with an expired lease; and its user has no
other submission running under a live lease (one at a time per learner).
Leases are short (15 s, renewed every 5 s); a worker that starts also frees
at once the leases of dead grading processes on its own host
(``release_dead``), so a crash costs seconds, not a lease's length.

A lease owner is ``host:pid-starttime:thread`` (app/grading/worker.py): the start time
tells a dead process from a new one that reused its pid.
Regrade items (`regrade_items`) are leased the same way; workers take them
only when no submission is waiting, so a regrade never delays learners.

Nothing here commits: the caller's transaction does (app/grading/worker.py, one
``session_scope`` per step). So a verdict and the LMS grade rows it arms commit
together or not at all; a failure between them leaves the lease held, and the
worker's retry (or, once the lease expires, another worker) records both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    and_,
    case,
    exists,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased

from app.data import lti_scores
from app.models import Regrade, RegradeItem, Submission, utcnow
from app.vocabulary import SubmissionStatus
from grader.child.verdicts import Mode
from grader.parking import Ticket

MAX_ATTEMPTS = 3


def _rows(session: Session, statement: Any) -> int:
    """Execute an UPDATE and say how many rows it changed (in the caller's transaction)."""
    result = cast(
        CursorResult[Any], session.execute(statement.execution_options(synchronize_session=False))
    )
    return result.rowcount


Leased = type[Submission] | type[RegradeItem]


@dataclass(frozen=True)
class GradingJob:
    """What a worker needs to grade one claimed row."""

    id: int  # the submission's, or the regrade item's
    slug: str
    version_id: int | None  # None: submitted before problems had versions (grade the live one)
    code: str
    mode: Mode
    attempts: int
    hidden_draw: int  # which variant of the hidden inputs (modulo the version's variants)
    learner: int | None = None  # whose submission (None: a regrade item, nobody's to continue)


def job_of(
    submission: Submission, regrade: tuple[RegradeItem, Regrade] | None = None
) -> GradingJob:
    """What a worker grades: a claimed submission as it was sent or, given a claimed regrade
    item and its regrade, the same code on the same hidden inputs against the regrade's
    version (always a submit: only submits are regraded)."""
    item, run = regrade if regrade is not None else (None, None)
    return GradingJob(
        id=submission.id if item is None else item.id,
        slug=submission.problem if run is None else run.problem,
        version_id=submission.problem_version_id if run is None else run.version_id,
        code=submission.code,
        mode=Mode(submission.mode) if run is None else Mode.SUBMIT,
        attempts=submission.attempts if item is None else item.attempts,
        hidden_draw=submission.hidden_draw or 0,  # a regrade keeps the first grading's inputs
        learner=submission.user_id if item is None else None,
    )


def _claimable(now: datetime) -> ColumnElement[bool]:
    other = aliased(Submission)
    busy_user = exists().where(
        other.user_id == Submission.user_id,
        other.id != Submission.id,
        other.status == SubmissionStatus.RUNNING,
        other.lease_expires_at > now,
    )
    return and_(_free(Submission, now), ~busy_user)


def _free(model: Leased, now: datetime) -> ColumnElement[bool]:
    return or_(
        model.status == SubmissionStatus.QUEUED,
        and_(model.status == SubmissionStatus.RUNNING, model.lease_expires_at <= now),
    )


def _claim(
    session: Session,
    model: Leased,
    condition: ColumnElement[bool],
    *,
    worker: str,
    lease_seconds: int,
    now: datetime,
    ahead: ColumnElement[Any] | None = None,
    **values: Any,
) -> int | None:
    """The oldest row meeting ``condition`` (by ``ahead`` first, when given), leased."""
    order = (model.id,) if ahead is None else (ahead, model.id)
    candidates = select(model.id).where(condition).order_by(*order).limit(5)
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        candidates = candidates.with_for_update(skip_locked=True)
    for row_id in session.scalars(candidates).all():
        won = _rows(
            session,
            update(model)
            .where(model.id == row_id, condition)
            .values(
                status=SubmissionStatus.RUNNING,
                lease_owner=worker,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                attempts=model.attempts + 1,
                **values,
            ),
        )
        if won == 1:
            return row_id
    return None


def _held_submissions(session: Session, now: datetime, held: Mapping[int, Ticket]) -> list[int]:
    """The claimable submissions that a held run's child would grade: their learner's,
    of the held code for the held version."""
    rows = session.execute(
        select(Submission.id, Submission.user_id, Submission.problem_version_id, Submission.code)
        .where(_claimable(now), Submission.mode == Mode.SUBMIT, Submission.user_id.in_(held))
        .order_by(Submission.id)
        .limit(20)
    ).all()
    return [row.id for row in rows if held[row.user_id].fits(row.problem_version_id, row.code)]


# Submits before runs, in one query (an idle worker polls twice a second).
_SUBMITS_FIRST = case((Submission.mode == Mode.SUBMIT, 0), else_=1)


def claim(
    session: Session,
    *,
    worker: str,
    lease_seconds: int,
    first_of: Mapping[int, Ticket] | None = None,
) -> Submission | None:
    """Claim a claimable submission for `worker`, or None: the oldest submit, else the
    oldest run. A submit is what counts, and it is a learner's last step: in a class's
    burst, learners who ran and are submitting are served before others' first runs,
    so each waits for about one grading rather than for the whole burst (its lateness is
    its own arrival time, whatever the order). ``first_of``: learners whose run this
    process holds, and for which code (grader/parking.py): a submission of that code
    goes before all (its verdict costs little, and a held run left waiting in the queue
    may expire)."""
    now = utcnow()
    claimable = _claimable(now)
    conditions = [claimable]
    if first_of and (held := _held_submissions(session, now, first_of)):
        conditions.insert(0, and_(claimable, Submission.id.in_(held)))
    for condition in conditions:
        won = _claim(
            session,
            Submission,
            condition,
            worker=worker,
            lease_seconds=lease_seconds,
            now=now,
            ahead=_SUBMITS_FIRST,
            started_at=now,
            samples_json=None,  # a second attempt shows its own samples
        )
        if won is not None:
            return session.get(Submission, won, populate_existing=True)
    return None


def claim_regrade_item(session: Session, *, worker: str, lease_seconds: int) -> RegradeItem | None:
    """Claim the oldest claimable regrade item (workers take these only when idle)."""
    now = utcnow()
    won = _claim(
        session,
        RegradeItem,
        _free(RegradeItem, now),
        worker=worker,
        lease_seconds=lease_seconds,
        now=now,
    )
    return None if won is None else session.get(RegradeItem, won, populate_existing=True)


def _held_by(model: Leased, row_id: int, worker: str) -> ColumnElement[bool]:
    """The row is running under `worker`'s lease."""
    return and_(
        model.id == row_id, model.lease_owner == worker, model.status == SubmissionStatus.RUNNING
    )


def _renew(session: Session, model: Leased, row_id: int, worker: str, lease_seconds: int) -> bool:
    statement = (
        update(model)
        .where(_held_by(model, row_id, worker))
        .values(lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
    )
    return _rows(session, statement) == 1


def renew(session: Session, submission_id: int, *, worker: str, lease_seconds: int) -> bool:
    """Extend the lease; False if it was lost (then the result must be dropped)."""
    return _renew(session, Submission, submission_id, worker, lease_seconds)


def renew_regrade_item(session: Session, item_id: int, *, worker: str, lease_seconds: int) -> bool:
    return _renew(session, RegradeItem, item_id, worker, lease_seconds)


def _finish(session: Session, model: Leased, row_id: int, worker: str, **values: Any) -> bool:
    statement = (
        update(model)
        .where(_held_by(model, row_id, worker))
        .values(status=SubmissionStatus.DONE, lease_owner=None, lease_expires_at=None, **values)
    )
    return _rows(session, statement) == 1


def samples_seen(session: Session, *, submission_id: int, worker: str, samples_json: str) -> None:
    """Keep the samples' reports while the hidden cases run, if ``worker`` still holds
    the submission (a lost lease writes nothing)."""
    session.execute(
        update(Submission)
        .where(
            Submission.id == submission_id,
            Submission.lease_owner == worker,
            Submission.status == SubmissionStatus.RUNNING,
        )
        .values(samples_json=samples_json)
    )


def complete(
    session: Session,
    *,
    submission_id: int,
    worker: str,
    verdict: str,
    score: float,
    result_json: str,
    hidden_draw: int | None = None,
) -> bool:
    """Record the result if `worker` still holds the lease; exactly one result per submission.
    A graded submit also arms its LMS grade-book rows, in the same transaction: the
    caller commits both, and a failure in either rolls back both with the lease still
    held, so a retry records the verdict and arms the rows (never one without the other).
    ``hidden_draw``: the draw it was graded on, where not the one it was stored with (a
    submission graded in its run's child, grader/parking.py)."""
    drawn = {} if hidden_draw is None else {"hidden_draw": hidden_draw}
    recorded = _finish(
        session,
        Submission,
        submission_id,
        worker,
        verdict=verdict,
        score=score,
        result_json=result_json,
        finished_at=utcnow(),
        **drawn,
    )
    if recorded:
        submission = session.get(Submission, submission_id)
        if submission is not None and submission.mode == Mode.SUBMIT:
            lti_scores.score_changed(
                session=session, user_id=submission.user_id, problem=submission.problem
            )
    return recorded


def complete_regrade_item(
    session: Session, *, item_id: int, worker: str, verdict: str, score: float, result_json: str
) -> bool:
    return _finish(
        session,
        RegradeItem,
        item_id,
        worker,
        new_verdict=verdict,
        new_score=score,
        new_result_json=result_json,
    )


def put_back(session: Session, model: Leased, row_id: int, *, worker: str) -> bool:
    """Return a row `worker` holds to the queue ungraded (the grader failed, not the
    submission: its runtime did not start). Its attempt stays counted, so a row that
    keeps failing ends after ``MAX_ATTEMPTS`` with a message, not in a loop."""
    statement = (
        update(model)
        .where(_held_by(model, row_id, worker))
        .values(status=SubmissionStatus.QUEUED, lease_owner=None, lease_expires_at=None)
    )
    return _rows(session, statement) == 1


def release_dead(session: Session, *, host: str, alive: Callable[[str], bool]) -> int:
    """Put back in the queue every row leased by a grading process of ``host`` that is
    no longer running (``alive(tag)`` is False for its ``pid-starttime`` tag)."""
    released = 0
    for model in (Submission, RegradeItem):
        rows = session.execute(
            select(model.id, model.lease_owner).where(
                model.status == SubmissionStatus.RUNNING, model.lease_owner.like(f"{host}:%")
            )
        ).all()
        for row_id, owner in rows:
            parts = (owner or "").split(":")
            if len(parts) >= 3 and not alive(parts[-2]):
                released += _rows(
                    session,
                    update(model)
                    .where(
                        model.id == row_id,
                        model.lease_owner == owner,
                        model.status == SubmissionStatus.RUNNING,
                    )
                    .values(
                        status=SubmissionStatus.QUEUED, lease_owner=None, lease_expires_at=None
                    ),
                )
    return released


def queue_position(session: Session, submission: Submission) -> int:
    """1 for the next to be claimed (ignoring the one-per-learner rule and held runs):
    submits go before runs (``claim``), each kind oldest first."""
    older = Submission.id < submission.id
    submit = Submission.mode == Mode.SUBMIT
    before = and_(submit, older) if submission.mode == Mode.SUBMIT else or_(submit, older)
    ahead = session.scalar(
        select(func.count()).where(Submission.status == SubmissionStatus.QUEUED, before)
    )
    return 1 + (ahead or 0)
