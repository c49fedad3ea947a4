"""The grade-book outbox's intake: a learner's score on a problem may have changed (a
verdict, a regrade, an override), so every LMS column linked to that problem in a
course they learn in is set to be sent again. Called in the transaction that changed
the score: the verdict and the promise to send it commit together, so no grade is
lost between them. Sending is app/lti/outbox.py's.

Arming is one UPDATE of every column it sets (status included), never a
read-then-write: a sender finishing meanwhile cannot leave a newer verdict marked
sent. A row that does not exist yet is inserted (under a savepoint: two verdicts
arming it at once find one row).
"""

from __future__ import annotations

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models import CourseMember, LtiContext, LtiResourceLink, LtiScore, utcnow
from app.vocabulary import MemberRole, OutboxStatus


def _armed_now() -> dict[str, object]:
    """An outbox row's columns when it is (re)armed: pending, to be sent now, afresh."""
    now = utcnow()
    return {
        "status": OutboxStatus.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "changed_at": now,
    }


def arm(*, session: Session, link_id: int, user_id: int) -> None:
    """Set the (link, learner) row to be sent now, making it if it is the first."""
    values = _armed_now()
    where = (LtiScore.link_id == link_id) & (LtiScore.user_id == user_id)
    if getattr(session.execute(update(LtiScore).where(where).values(**values)), "rowcount", 0):
        return
    try:
        with session.begin_nested():
            session.add(LtiScore(link_id=link_id, user_id=user_id, **values))
    except IntegrityError:  # armed by another transaction just now: arm that row
        session.execute(update(LtiScore).where(where).values(**values))


def arm_all(*, session: Session, link_id: int, user_ids: list[int]) -> None:
    """``arm`` for many learners on one link (a course's grades recomputed: an
    extensions upload, a late policy) in three statements: the rows that exist are
    armed by one UPDATE, the rest inserted by one INSERT under a savepoint; should a
    verdict arm one of them meanwhile, each of those learners goes through ``arm``."""
    if not user_ids:
        return
    values = _armed_now()
    mine = (LtiScore.link_id == link_id) & LtiScore.user_id.in_(user_ids)
    session.execute(
        update(LtiScore).where(mine).values(**values).execution_options(synchronize_session=False)
    )
    present = set(session.scalars(select(LtiScore.user_id).where(mine)))
    missing = [user_id for user_id in user_ids if user_id not in present]
    if not missing:
        return
    try:
        with session.begin_nested():
            session.execute(
                insert(LtiScore), [{"link_id": link_id, "user_id": u, **values} for u in missing]
            )
    except IntegrityError:  # armed by another transaction just now
        for user_id in missing:
            arm(session=session, link_id=link_id, user_id=user_id)


def score_changed(*, session: Session, user_id: int, problem: str) -> int:
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
    for link_id in links:
        arm(session=session, link_id=link_id, user_id=user_id)
    return len(links)


def course_links(*, session: Session, course_id: int, problem: str) -> list[int]:
    """The course's LMS links to ``problem``."""
    return list(
        session.scalars(
            select(LtiResourceLink.id)
            .join(LtiContext, LtiContext.id == LtiResourceLink.context_id)
            .where(LtiContext.course_id == course_id, LtiResourceLink.problem == problem)
        )
    )


def learners_with_rows(*, session: Session, link_ids: list[int]) -> set[int]:
    """Learners a score was ever armed or sent for on these links."""
    return set(session.scalars(select(LtiScore.user_id).where(LtiScore.link_id.in_(link_ids))))
