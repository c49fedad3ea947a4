"""Courses: creating and joining them, membership, assignments (keyword-only data
functions). What instructors read of a course is in app/reports/."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core import throttle
from app.errors import ForbiddenError, InvalidInputError, NotFoundError, TooManyError
from app.models import Assignment, Course, CourseMember, User
from app.vocabulary import COURSE_CREATOR_ROLES, MemberRole

JOIN_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def create_course(*, session: Session, name: str, instructor: User) -> Course:
    if instructor.role not in COURSE_CREATOR_ROLES:
        raise ForbiddenError("only instructors can create courses")
    if not 1 <= len(name.strip()) <= 120:
        raise InvalidInputError("a course name is 1-120 characters")
    course = Course(name=name.strip(), join_code=new_join_code())
    session.add(course)
    session.flush()
    session.add(
        CourseMember(course_id=course.id, user_id=instructor.id, role=MemberRole.INSTRUCTOR)
    )
    session.flush()
    return course


def new_join_code() -> str:
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(8))


def join_course(*, session: Session, code: str, user: User, address: str) -> Course:
    """Join by code. A code is the only key to a course, so wrong ones are throttled like
    passwords, per account and per address (``address``: the client's,
    app/core/throttle.py): ten an account a quarter of an hour, twenty an address in
    five minutes, where one client once tried a hundred a second."""
    windows = (
        (throttle.wrong_join_codes_by_account, f"user:{user.id}"),
        (throttle.wrong_join_codes_by_address, address),
    )
    wait = max(window.wait_seconds(key) for window, key in windows)
    if wait:
        raise TooManyError(f"too many wrong join codes; try again in {wait} s", retry_after=wait)
    course = session.scalar(select(Course).where(Course.join_code == code.strip().upper()))
    if course is None:
        for window, key in windows:
            window.record(key)
        raise InvalidInputError("no course has that join code")
    if membership(session=session, course=course, user=user) is None:
        session.add(CourseMember(course_id=course.id, user_id=user.id, role=MemberRole.LEARNER))
        session.flush()
    return course


def membership(*, session: Session, course: Course, user: User) -> str | None:
    return session.scalar(
        select(CourseMember.role).where(
            CourseMember.course_id == course.id, CourseMember.user_id == user.id
        )
    )


@dataclass(frozen=True)
class CourseAccess:
    """A course as one of its members sees it."""

    course: Course
    role: MemberRole
    user: User


def access(*, session: Session, course_id: int, user: User) -> CourseAccess:
    """``user``'s view of the course; for anyone outside it the course does not exist."""
    course = session.get(Course, course_id)
    role = membership(session=session, course=course, user=user) if course else None
    if course is None or role is None:
        raise NotFoundError(f"No course {course_id}.")
    return CourseAccess(course=course, role=MemberRole(role), user=user)


def as_instructor(found: CourseAccess) -> CourseAccess:
    if found.role is not MemberRole.INSTRUCTOR:
        raise ForbiddenError("Only the course's instructors can see this.")
    return found


def courses_of(*, session: Session, user: User) -> list[tuple[Course, str]]:
    rows = session.execute(
        select(Course, CourseMember.role)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .where(CourseMember.user_id == user.id)
        .order_by(Course.id)
    )
    return [(course, role) for course, role in rows]


def utc_naive(moment: datetime) -> datetime:
    """Dates are stored naive in UTC: one with an offset is converted, not cut off."""
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


def assign(
    *, session: Session, course: Course, problem: str, due_at: datetime | None
) -> Assignment:
    """Assign ``problem`` (or move its due date; ``due_at`` in any offset, kept in UTC)."""
    due_at = utc_naive(due_at) if due_at is not None else None
    existing = session.scalar(
        select(Assignment).where(Assignment.course_id == course.id, Assignment.problem == problem)
    )
    if existing is not None:
        existing.due_at = due_at
        return existing
    assignment = Assignment(course_id=course.id, problem=problem, due_at=due_at)
    session.add(assignment)
    session.flush()
    return assignment


def assignments_of(*, session: Session, course: Course) -> list[Assignment]:
    return list(
        session.scalars(
            select(Assignment).where(Assignment.course_id == course.id).order_by(Assignment.id)
        )
    )


def members_of(*, session: Session, course: Course) -> list[tuple[User, str]]:
    """Everyone in the course with their role, instructors first, then by name."""
    rows = session.execute(
        select(User, CourseMember.role)
        .join(CourseMember, CourseMember.user_id == User.id)
        .where(CourseMember.course_id == course.id)
        .order_by(CourseMember.role, User.name)
    )
    return [(user, role) for user, role in rows]


def course_learner(*, session: Session, course: Course, learner_id: int) -> User:
    """A learner of the course, or NotFoundError (instructors are not graded)."""
    learner = session.get(User, learner_id)
    role = membership(session=session, course=course, user=learner) if learner else None
    if learner is None or role != MemberRole.LEARNER:
        raise NotFoundError("No such learner in this course.")
    return learner


def require_assigned(*, session: Session, course: Course, slug: str) -> None:
    if slug not in {a.problem for a in assignments_of(session=session, course=course)}:
        raise NotFoundError(f"{slug!r} is not assigned in this course.")


def learners_of(*, session: Session, course: Course) -> list[User]:
    return list(
        session.scalars(
            select(User)
            .join(CourseMember, CourseMember.user_id == User.id)
            .where(CourseMember.course_id == course.id, CourseMember.role == MemberRole.LEARNER)
            .order_by(User.name)
        )
    )
