"""The grade-book outbox's intake: a learner's score on a problem may have changed (a
verdict, a regrade, an override), so every LMS column linked to that problem in a
course they learn in is set to be sent again. Called in the transaction that changed
the score: the verdict and the promise to send it commit together, so no grade is
lost between them. Sending is app/lti/outbox.py's."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import CourseMember, LtiContext, LtiResourceLink, LtiScore, utcnow
from app.vocabulary import MemberRole

PENDING, SENT, FAILED = "pending", "sent", "failed"


def score_changed(session: Session, *, user_id: int, problem: str) -> int:
    """Arm the learner's rows for ``problem``'s links; returns how many."""
    links = session.scalars(
        select(LtiResourceLink.id)
        .join(LtiContext, LtiContext.id == LtiResourceLink.context_id)
        .join(
            CourseMember,
            (CourseMember.course_id == LtiContext.course_id)
            & (CourseMember.user_id == user_id)
            & (CourseMember.role == MemberRole.LEARNER),
        )
        .where(LtiResourceLink.problem == problem)
    ).all()
    now = utcnow()
    for link_id in links:
        row = session.scalar(
            select(LtiScore).where(LtiScore.link_id == link_id, LtiScore.user_id == user_id)
        )
        if row is None:
            row = LtiScore(link_id=link_id, user_id=user_id)
            session.add(row)
        row.status, row.attempts, row.next_attempt_at, row.changed_at = PENDING, 0, now, now
    session.flush()
    return len(links)
