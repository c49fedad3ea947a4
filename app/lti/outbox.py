"""Sending the grade-book outbox (app/data/lti_scores.py arms it) to the LMSs.

A due row is claimed by pushing its next attempt ``CLAIM_SECONDS`` ahead (so two
servers do not send it at once), then sent with the learner's score *of this
moment*: their final score as the course's grade book shows it (late policy,
extensions and overrides applied: app/reports/gradebook.py), out of the link's
maximum. A row whose score changed while it
was being sent stays pending and goes again; a failure waits ``backoff(attempts)``
and is retried across restarts; after ``MAX_ATTEMPTS``, or at once when the
platform refuses for good (a 4xx other than 401, 408, 429), it is ``failed`` with
the platform's answer, for instructors to see and ``jaxjudge lti resend``.
Sending twice is harmless: the platform keeps the score with the latest timestamp.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, literal, select, update
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.core.periodic import Periodic
from app.lti import claims, services
from app.lti.http import PlatformCallError
from app.lti.provisioning import same_authority
from app.lti.status import links_of
from app.models import (
    Course,
    LtiAccount,
    LtiContext,
    LtiPlatform,
    LtiResourceLink,
    LtiScore,
    utcnow,
)
from app.reports import gradebook
from app.vocabulary import OutboxStatus

log = logging.getLogger("jaxjudge.lti")

CLAIM_SECONDS = 120
MAX_ATTEMPTS = 12
BATCH = 50
MAX_BATCHES = 100


def backoff(attempts: int) -> timedelta:
    """30 s after the first failure, doubling, at most six hours."""
    delay: timedelta = timedelta(seconds=30) * 2 ** max(0, attempts - 1)
    return min(timedelta(hours=6), delay)


def _due_ids(session: Session, now: datetime) -> list[int]:
    return list(
        session.scalars(
            select(LtiScore.id)
            .where(LtiScore.status == OutboxStatus.PENDING, LtiScore.next_attempt_at <= now)
            .order_by(LtiScore.next_attempt_at)
            .limit(BATCH)
        )
    )


def _claim(row_id: int) -> datetime | None:
    """Take a due row for ``CLAIM_SECONDS`` (committed at once, so a failure while
    planning cannot hand it back early); returns the ``changed_at`` it was armed with."""
    now = utcnow()
    with session_scope() as session:
        claimed = session.execute(
            update(LtiScore)
            .where(
                LtiScore.id == row_id,
                LtiScore.status == OutboxStatus.PENDING,
                LtiScore.next_attempt_at <= now,
            )
            .values(next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
        )
        if getattr(claimed, "rowcount", 0) != 1:
            return None
        return session.scalar(select(LtiScore.changed_at).where(LtiScore.id == row_id))


@dataclass(frozen=True)
class _Plan:
    """What one send needs, read in a short transaction: no database transaction is
    held open while the LMS is called."""

    row_id: int
    changed_at: datetime
    link_id: int
    lineitem_url: str | None
    lineitems_url: str | None
    may_create_lineitem: bool
    resource_link_id: str
    problem: str
    score_maximum: float
    platform: LtiPlatform  # detached: read-only here
    sub: str
    best: float | None


def _plan(session: Session, row: LtiScore, changed_at: datetime) -> _Plan:
    link = session.get(LtiResourceLink, row.link_id)
    context = session.get(LtiContext, link.context_id) if link else None
    platform = session.get(LtiPlatform, context.platform_id) if context else None
    course = session.get(Course, context.course_id) if context else None
    if link is None or context is None or platform is None or course is None:
        raise PlatformCallError("the link, its course or its LMS is gone", status=410)
    account = session.scalar(  # the learner's sub at this LMS (under any of its registrations)
        select(LtiAccount)
        .where(
            LtiAccount.user_id == row.user_id,
            LtiAccount.platform_id.in_(same_authority(session=session, platform_id=platform.id)),
        )
        .limit(1)
    )
    if account is None:
        raise PlatformCallError("the learner has no account in this LMS (never launched)", 404)
    plan = _Plan(
        row_id=row.id,
        changed_at=changed_at,
        link_id=link.id,
        lineitem_url=link.lineitem_url,
        lineitems_url=context.lineitems_url,
        may_create_lineitem=claims.SCOPE_LINEITEM in context.scopes.split(),
        resource_link_id=link.resource_link_id,
        problem=link.problem,
        score_maximum=link.score_maximum,
        platform=platform,
        sub=account.sub,
        best=gradebook.final_score(
            session=session, course=course, user_id=row.user_id, problem=link.problem
        ),
    )
    session.expunge(platform)
    return plan


def _call_lms(plan: _Plan) -> tuple[str | None, float]:
    """Send the plan's score (making the link's column first if it has none); returns
    the column made, if one was, and the score sent. Any failure after a column was
    made carries it (``ScoreNotSentError.made``), so that it is kept, not made again."""
    made = None
    lineitem_url = plan.lineitem_url
    if lineitem_url is None:
        if not plan.lineitems_url or not plan.may_create_lineitem:
            raise PlatformCallError("the LMS gave this link no grade-book column", status=404)
        token = services.access_token(plan.platform, (claims.SCOPE_LINEITEM,))
        made = lineitem_url = services.create_lineitem(
            token,
            plan.lineitems_url,
            label=plan.problem,
            score_maximum=plan.score_maximum,
            resource_link_id=plan.resource_link_id,
            tag=plan.problem,
        )
    given = round((plan.best or 0.0) * plan.score_maximum, 6)
    try:
        token = services.access_token(plan.platform, (claims.SCOPE_SCORE,))
        services.post_score(
            token,
            lineitem_url,
            services.Score(
                user_sub=plan.sub,
                score_given=given,
                score_maximum=plan.score_maximum,
                activity_progress="Completed" if plan.best is not None else "Initialized",
                grading_progress="FullyGraded" if plan.best is not None else "NotReady",
                timestamp=plan.changed_at,
            ),
        )
    except Exception as error:  # every failure of the send, with the column it made
        status = error.status if isinstance(error, PlatformCallError) else None
        if status == 401:  # a revoked or expired token: the next try asks anew
            services.forget_tokens()
        message = (
            str(error) if isinstance(error, PlatformCallError) else f"internal error: {error!r}"
        )
        raise ScoreNotSentError(message, status, made) from None
    return made, given


class ScoreNotSentError(PlatformCallError):
    """A failed send that may already have made the link's column (``made``)."""

    def __init__(self, message: str, status: int | None, made: str | None) -> None:
        super().__init__(message, status)
        self.made = made
        self.link_id = 0  # set by the caller, who knows the plan


def _unchanged(row_id: int, changed_at: datetime) -> ColumnElement[bool]:
    """The row as it was claimed: a newer verdict re-arms it (a new ``changed_at``),
    and then nothing this send learned may overwrite that."""
    return (
        (LtiScore.id == row_id)
        & (LtiScore.changed_at == changed_at)
        & (LtiScore.status == OutboxStatus.PENDING)
    )


def _column_recorded(link_id: int, made: str | None) -> Any:
    """Keep the column a send made, unless the link has one already (another server's)."""
    return (
        update(LtiResourceLink)
        .where(
            LtiResourceLink.id == link_id,
            LtiResourceLink.lineitem_url.is_(None),
            literal(made is not None),
        )
        .values(lineitem_url=made)
    )


def _failed(row_id: int, changed_at: datetime, error: Exception) -> OutboxStatus:
    """Record a failed send on the row, if it is still the one that was sent: a row
    re-armed meanwhile (a newer verdict) starts afresh and is not touched."""
    status = error.status if isinstance(error, PlatformCallError) else None
    permanent = isinstance(error, PlatformCallError) and error.permanent
    message = str(error) if isinstance(error, PlatformCallError) else f"internal error: {error!r}"
    with session_scope() as session:
        if isinstance(error, ScoreNotSentError):
            session.execute(_column_recorded(error.link_id, error.made))
        row = session.get(LtiScore, row_id)
        if row is None:
            return OutboxStatus.FAILED
        attempts = row.attempts + 1
        ends = permanent or attempts >= MAX_ATTEMPTS
        values: dict[str, object] = {"attempts": attempts, "last_error": message[:2000]}
        if ends:
            values["status"] = OutboxStatus.FAILED
        else:
            values["next_attempt_at"] = utcnow() + backoff(attempts)
        recorded = session.execute(
            update(LtiScore).where(_unchanged(row_id, changed_at)).values(**values)
        )
        if not getattr(recorded, "rowcount", 0):
            return OutboxStatus.PENDING  # re-armed meanwhile: it goes again, from zero attempts
    log.warning("LMS score for row %s not sent (HTTP %s): %s", row_id, status, message)
    return OutboxStatus.FAILED if ends else OutboxStatus.PENDING


def deliver_one(row_id: int) -> OutboxStatus | None:
    """Claim and send one row; returns its new status (None: another server has it)."""
    changed_at = _claim(row_id)
    if changed_at is None:
        return None
    try:
        with session_scope() as session:
            row = session.get(LtiScore, row_id)
            if row is None:
                return None
            plan = _plan(session, row, changed_at)
        made, given = _call_lms(plan)
    except ScoreNotSentError as error:
        error.link_id = plan.link_id
        return _failed(row_id, changed_at, error)
    except Exception as error:  # every failure is this row's, recorded on it
        return _failed(row_id, changed_at, error)
    with session_scope() as session:
        if made is not None and not _rows(session.execute(_column_recorded(plan.link_id, made))):
            # Another server made the link's column first: this score went to a column the
            # link does not keep, so it goes again, to the kept one.
            session.execute(
                update(LtiScore)
                .where(_unchanged(row_id, changed_at))
                .values(next_attempt_at=utcnow())
            )
            return OutboxStatus.PENDING
        now = utcnow()
        sent = session.execute(
            update(LtiScore)
            .where(_unchanged(row_id, changed_at))
            .values(status=OutboxStatus.SENT, attempts=0, last_error=None, sent_at=now,
                    score_given=given, score_maximum=plan.score_maximum)
        )  # fmt: skip
        if _rows(sent):
            return OutboxStatus.SENT
        # A newer verdict re-armed the row while this one was on its way: it goes next.
        session.execute(
            update(LtiScore)
            .where(LtiScore.id == row_id)
            .values(sent_at=now, score_given=given, score_maximum=plan.score_maximum)
        )
        return OutboxStatus.PENDING


def _rows(result: object) -> int:
    return int(getattr(result, "rowcount", 0) or 0)


def deliver_due() -> int:
    """Send every due row (in batches of ``BATCH``, at most ``MAX_BATCHES``); returns how
    many were sent."""
    sent = 0
    for _ in range(MAX_BATCHES):
        with session_scope() as session:
            due = _due_ids(session, utcnow())
        sent += sum(deliver_one(row_id) == OutboxStatus.SENT for row_id in due)
        if len(due) < BATCH:
            break
    return sent


def resend(session: Session, *, course_id: int | None = None, failed_only: bool = True) -> int:
    """Make failed rows (or, ``failed_only=False``, every row) pending again now."""
    statement = update(LtiScore).values(
        status=OutboxStatus.PENDING, attempts=0, next_attempt_at=utcnow(), changed_at=utcnow()
    )
    if failed_only:
        statement = statement.where(LtiScore.status == OutboxStatus.FAILED)
    if course_id is not None:
        statement = statement.where(LtiScore.link_id.in_(links_of(course_id)))
    return int(getattr(session.execute(statement), "rowcount", 0) or 0)


def deliverer(interval: float = 5.0) -> Periodic:
    """Sends due rows every ``interval`` seconds in a thread of the server."""
    return Periodic(
        name="lti-outbox", interval=interval, work=deliver_due, log=log, stop_timeout=15
    )
