"""Sending the grade-book outbox (app/data/lti_scores.py arms it) to the LMSs.

A due row is claimed by pushing its next attempt ``CLAIM_SECONDS`` ahead (so two
servers do not send it at once), then sent with the learner's score *of this
moment*: the best score of their submits within the course, the one the course's
grade book shows, out of the link's maximum. A row whose score changed while it
was being sent stays pending and goes again; a failure waits ``backoff(attempts)``
and is retried across restarts; after ``MAX_ATTEMPTS``, or at once when the
platform refuses for good (a 4xx other than 401, 408, 429), it is ``failed`` with
the platform's answer, for instructors to see and ``jaxjudge lti resend``.
Sending twice is harmless: the platform keeps the score with the latest timestamp.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data.lti_scores import FAILED, PENDING, SENT
from app.lti import claims, services
from app.lti.http import PlatformCallError
from app.models import (
    Course,
    LtiAccount,
    LtiContext,
    LtiPlatform,
    LtiResourceLink,
    LtiScore,
    Submission,
    utcnow,
)
from app.reports.course_submissions import SCORE, within
from app.vocabulary import SubmissionStatus

log = logging.getLogger("jaxjudge.lti")

CLAIM_SECONDS = 120
MAX_ATTEMPTS = 12
BATCH = 50


def backoff(attempts: int) -> timedelta:
    """30 s after the first failure, doubling, at most six hours."""
    delay: timedelta = timedelta(seconds=30) * 2 ** max(0, attempts - 1)
    return min(timedelta(hours=6), delay)


def _due_ids(session: Session, now: datetime) -> list[int]:
    return list(
        session.scalars(
            select(LtiScore.id)
            .where(LtiScore.status == PENDING, LtiScore.next_attempt_at <= now)
            .order_by(LtiScore.next_attempt_at)
            .limit(BATCH)
        )
    )


def _claim(session: Session, row_id: int, now: datetime) -> LtiScore | None:
    claimed = session.execute(
        update(LtiScore)
        .where(LtiScore.id == row_id, LtiScore.status == PENDING, LtiScore.next_attempt_at <= now)
        .values(next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
    )
    if getattr(claimed, "rowcount", 0) != 1:
        return None
    return session.get(LtiScore, row_id)


def best_score(session: Session, *, course: Course, user_id: int, problem: str) -> float | None:
    """The learner's best score (0 to 1) on ``problem`` as the course sees it; None
    before any graded submit."""
    scores = (
        within(course, SCORE)
        .where(
            Submission.user_id == user_id,
            Submission.problem == problem,
            Submission.status == SubmissionStatus.DONE,
        )
        .subquery()
    )
    best = session.scalar(select(func.max(scores.c.score)))
    return None if best is None else float(best)


def _send(session: Session, row: LtiScore) -> None:
    link = session.get(LtiResourceLink, row.link_id)
    context = session.get(LtiContext, link.context_id) if link else None
    platform = session.get(LtiPlatform, context.platform_id) if context else None
    course = session.get(Course, context.course_id) if context else None
    if link is None or context is None or platform is None or course is None:
        raise PlatformCallError("the link, its course or its LMS is gone", status=410)
    account = session.scalar(  # the learner's sub at this LMS (under any of its registrations)
        select(LtiAccount)
        .join(LtiPlatform, LtiPlatform.id == LtiAccount.platform_id)
        .where(LtiAccount.user_id == row.user_id, LtiPlatform.issuer == platform.issuer)
        .limit(1)
    )
    if account is None:
        raise PlatformCallError("the learner has no account in this LMS (never launched)", 404)
    scopes = set(context.scopes.split())
    if link.lineitem_url is None:
        if not context.lineitems_url or claims.SCOPE_LINEITEM not in scopes:
            raise PlatformCallError("the LMS gave this link no grade-book column", status=404)
        token = services.access_token(session, platform, (claims.SCOPE_LINEITEM,))
        link.lineitem_url = services.create_lineitem(
            token,
            context.lineitems_url,
            label=link.problem,
            score_maximum=link.score_maximum,
            resource_link_id=link.resource_link_id,
            tag=link.problem,
        )
    best = best_score(session, course=course, user_id=row.user_id, problem=link.problem)
    given = round((best or 0.0) * link.score_maximum, 6)
    token = services.access_token(session, platform, (claims.SCOPE_SCORE,))
    services.post_score(
        token,
        link.lineitem_url,
        services.Score(
            user_sub=account.sub,
            score_given=given,
            score_maximum=link.score_maximum,
            activity_progress="Completed" if best is not None else "Initialized",
            grading_progress="FullyGraded" if best is not None else "NotReady",
            timestamp=row.changed_at,
        ),
    )
    row.score_given, row.score_maximum = given, link.score_maximum


def deliver_one(row_id: int) -> str | None:
    """Claim and send one row; returns its new status (None: another server has it)."""
    now = utcnow()
    with session_scope() as session:
        row = _claim(session, row_id, now)
        if row is None:
            return None
        changed_at = row.changed_at
    with session_scope() as session:
        row = session.get(LtiScore, row_id)
        if row is None:
            return None
        try:
            _send(session, row)
        except PlatformCallError as error:
            row.attempts += 1
            row.last_error = str(error)[:2000]
            if error.permanent or row.attempts >= MAX_ATTEMPTS:
                row.status = FAILED
            else:
                row.next_attempt_at = utcnow() + backoff(row.attempts)
            log.warning("LMS score for row %s not sent (%s): %s", row_id, row.status, error)
            return row.status
        row.last_error, row.sent_at = None, utcnow()
        if row.changed_at == changed_at:
            row.status, row.attempts = SENT, 0
        else:  # a newer verdict arrived while sending: it goes next
            row.next_attempt_at = utcnow()
        return row.status


def deliver_due() -> int:
    """Send every due row once; returns how many were sent."""
    with session_scope() as session:
        due = _due_ids(session, utcnow())
    return sum(deliver_one(row_id) == SENT for row_id in due)


def resend(session: Session, *, course_id: int | None = None, failed_only: bool = True) -> int:
    """Make failed rows (or, ``failed_only=False``, every row) pending again now."""
    statement = update(LtiScore).values(
        status=PENDING, attempts=0, next_attempt_at=utcnow(), changed_at=utcnow()
    )
    if failed_only:
        statement = statement.where(LtiScore.status == FAILED)
    if course_id is not None:
        links = (
            select(LtiResourceLink.id)
            .join(LtiContext, LtiContext.id == LtiResourceLink.context_id)
            .where(LtiContext.course_id == course_id)
        )
        statement = statement.where(LtiScore.link_id.in_(links))
    return int(getattr(session.execute(statement), "rowcount", 0) or 0)


class Deliverer:
    """Sends due rows every ``interval`` seconds in a thread of the server."""

    def __init__(self, interval: float = 5.0) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lti-outbox", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=15)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                deliver_due()
            except Exception:
                log.exception("LMS outbox round failed")
