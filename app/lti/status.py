"""What instructors and admins read of the LMS side: a course's link to its LMS course,
its links, and the grade-book outbox (pending, failed with the platform's answer,
sent), for one course or the whole platform."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, case, func, select
from sqlalchemy.orm import Session

from app.models import Course, LtiContext, LtiPlatform, LtiResourceLink, LtiScore, User
from app.vocabulary import OutboxStatus


@dataclass(frozen=True)
class OutboxRow:
    course: str
    course_id: int
    learner: str
    problem: str
    status: OutboxStatus
    attempts: int
    score_given: float | None
    score_maximum: float | None
    last_error: str | None
    next_attempt_at: datetime
    sent_at: datetime | None


@dataclass(frozen=True)
class Outbox:
    counts: dict[str, int]
    rows: list[OutboxRow]  # failed first, then pending, then sent; newest first within


_ORDER = {OutboxStatus.FAILED: 0, OutboxStatus.PENDING: 1, OutboxStatus.SENT: 2}


def counts(session: Session, *, course_id: int | None = None) -> dict[str, int]:
    """How many rows are failed, pending and sent (for one course, or all), by the
    statuses' values."""
    query = select(LtiScore.status, func.count()).group_by(LtiScore.status)
    if course_id is not None:
        query = query.where(LtiScore.link_id.in_(links_of(course_id)))
    found = {status: int(count) for status, count in session.execute(query)}
    return {status.value: found.get(status, 0) for status in _ORDER}


def links_of(course_id: int) -> Select[int]:
    """The ids of a course's LMS links (a subquery)."""
    return (
        select(LtiResourceLink.id)
        .join(LtiContext, LtiContext.id == LtiResourceLink.context_id)
        .where(LtiContext.course_id == course_id)
    )


def outbox(session: Session, *, course_id: int | None = None, limit: int = 200) -> Outbox:
    """The counts, and the first ``limit`` rows: failed, then pending, then sent, the
    latest first within each (ordered and cut by the database)."""
    query = (
        select(LtiScore, LtiResourceLink, Course, User)
        .join(LtiResourceLink, LtiResourceLink.id == LtiScore.link_id)
        .join(LtiContext, LtiContext.id == LtiResourceLink.context_id)
        .join(Course, Course.id == LtiContext.course_id)
        .join(User, User.id == LtiScore.user_id)
        .order_by(
            case(_ORDER, value=LtiScore.status, else_=len(_ORDER)),
            func.coalesce(LtiScore.sent_at, LtiScore.next_attempt_at).desc(),
        )
        .limit(limit)
    )
    if course_id is not None:
        query = query.where(Course.id == course_id)
    rows = [
        OutboxRow(
            course=course.name,
            course_id=course.id,
            learner=user.name,
            problem=link.problem,
            status=OutboxStatus(row.status),
            attempts=row.attempts,
            score_given=row.score_given,
            score_maximum=row.score_maximum,
            last_error=row.last_error,
            next_attempt_at=row.next_attempt_at,
            sent_at=row.sent_at,
        )
        for row, link, course, user in session.execute(query)
    ]
    return Outbox(counts=counts(session, course_id=course_id), rows=rows)


@dataclass(frozen=True)
class CourseLink:
    context: LtiContext
    platform: LtiPlatform
    links: list[LtiResourceLink]


def course_link(session: Session, *, course_id: int) -> CourseLink | None:
    context = session.scalar(select(LtiContext).where(LtiContext.course_id == course_id))
    if context is None:
        return None
    platform = session.get(LtiPlatform, context.platform_id)
    assert platform is not None
    links = list(
        session.scalars(
            select(LtiResourceLink)
            .where(LtiResourceLink.context_id == context.id)
            .order_by(LtiResourceLink.id)
        )
    )
    return CourseLink(context=context, platform=platform, links=links)
