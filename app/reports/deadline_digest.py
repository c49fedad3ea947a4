"""The daily digest: to each learner who wants it (``User.notify_deadline``) and may be
mailed, the assignments of their courses due within the next 24 hours (their own due
date: an extension counts) that they have not solved. At most one per account per
24 hours (``User.deadline_digest_at``), none when nothing is due.

``send_due`` is one round: the server runs it every few minutes (``digest_job``, a
thread like the LMS outbox's), ``jaxjudge notify digest`` once. Two rounds at once
(two server processes) send one digest: an account is claimed by a conditional
UPDATE of its ``deadline_digest_at`` before its mail is queued, in one transaction."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.core.periodic import Periodic
from app.data import notifications
from app.data.mail import USABLE_SOURCES, mail_address, queue
from app.models import Course, CourseMember, Submission, User, utcnow
from app.reports.windows import CourseWindows
from app.vocabulary import MailKind, MemberRole, NotificationKind
from grader.child.verdicts import Mode, Verdict

log = logging.getLogger("jaxjudge.notifications")

WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class Due:
    course_name: str
    problem: str
    due_at: datetime
    extended: bool
    link: str


def _solved(session: Session, user_id: int, problems: set[str]) -> set[str]:
    if not problems:
        return set()
    return set(
        session.scalars(
            select(Submission.problem)
            .where(
                Submission.user_id == user_id,
                Submission.problem.in_(problems),
                Submission.mode == Mode.SUBMIT,
                Submission.verdict == Verdict.ACCEPTED,
            )
            .distinct()
        )
    )


def due_for(
    *, session: Session, user: User, now: datetime, windows: dict[int, CourseWindows] | None = None
) -> list[Due]:
    """What ``user`` has due in (now, now + 24 h] in the courses they learn in, open
    already and not solved, soonest first."""
    windows = {} if windows is None else windows
    found: list[Due] = []
    courses = session.scalars(
        select(Course)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .where(CourseMember.user_id == user.id, CourseMember.role == MemberRole.LEARNER)
        .order_by(Course.id)
    )
    for course in courses:
        if course.id not in windows:
            windows[course.id] = CourseWindows(session, course)
        course_windows = windows[course.id]
        for problem in course_windows.assignments:
            window = course_windows.of(user.id, problem)
            if window.due_at is None or window.opens_at > now:
                continue
            if now < window.due_at <= now + WINDOW:
                link = f"{notifications.base_url()}/problems/{problem}"
                found.append(Due(course.name, problem, window.due_at, window.extended, link))
    solved = _solved(session, user.id, {d.problem for d in found})
    return sorted((d for d in found if d.problem not in solved), key=lambda d: d.due_at)


def _claim(session: Session, user: User, now: datetime) -> bool:
    """Mark ``user``'s digest as sent now, unless a digest went out in the last 24 h."""
    claimed = session.execute(
        update(User)
        .where(
            User.id == user.id,
            or_(User.deadline_digest_at.is_(None), User.deadline_digest_at <= now - WINDOW),
        )
        .values(deadline_digest_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(getattr(claimed, "rowcount", 0))


def send_due(*, session: Session, now: datetime | None = None) -> int:
    """Queue every digest due now; returns how many. The caller commits."""
    now = now or utcnow()
    candidates = session.scalars(
        select(User)
        .where(
            User.notify_deadline.is_(True),
            User.disabled_at.is_(None),
            User.email != "",
            User.email_source.in_(USABLE_SOURCES),
            or_(User.deadline_digest_at.is_(None), User.deadline_digest_at <= now - WINDOW),
        )
        .order_by(User.id)
    ).all()
    windows: dict[int, CourseWindows] = {}
    sent = 0
    for user in candidates:
        address = mail_address(user)
        due = due_for(session=session, user=user, now=now, windows=windows)
        if address is None or not due or not _claim(session, user, now):
            continue
        queue(
            session=session,
            kind=MailKind.DEADLINE_DIGEST,
            to_address=address,
            template="deadline-digest",
            user=user,
            due=due,
            unsubscribe_url=notifications.unsubscribe_url(user, NotificationKind.DEADLINE),
            account_url=f"{notifications.base_url()}/account",
        )
        sent += 1
    return sent


def run_once() -> int:
    with session_scope() as session:
        return send_due(session=session)


def _round() -> None:
    if sent := run_once():
        log.info("deadline digests queued: %d", sent)


def digest_job(interval: float = 300.0) -> Periodic:
    """Runs a round every ``interval`` seconds in a thread of the server."""
    return Periodic(
        name="deadline-digest", interval=interval, work=_round, log=log, stop_timeout=15
    )
