"""Courses: creating and joining them, membership, assignments (keyword-only data
functions). What instructors read of a course is in app/reports/."""

from __future__ import annotations

import secrets
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import ForbiddenError, InvalidInputError
from app.models import Assignment, Course, CourseMember, User
from app.vocabulary import COURSE_CREATOR_ROLES, MemberRole

JOIN_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def create_course(*, session: Session, name: str, instructor: User) -> Course:
    if instructor.role not in COURSE_CREATOR_ROLES:
        raise ForbiddenError("only instructors can create courses")
    if not 1 <= len(name.strip()) <= 120:
        raise InvalidInputError("a course name is 1-120 characters")
    course = Course(
        name=name.strip(), join_code="".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(8))
    )
    session.add(course)
    session.flush()
    session.add(
        CourseMember(course_id=course.id, user_id=instructor.id, role=MemberRole.INSTRUCTOR)
    )
    session.flush()
    return course


def join_course(*, session: Session, code: str, user: User) -> Course:
    course = session.scalar(select(Course).where(Course.join_code == code.strip().upper()))
    if course is None:
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


def courses_of(*, session: Session, user: User) -> list[tuple[Course, str]]:
    rows = session.execute(
        select(Course, CourseMember.role)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .where(CourseMember.user_id == user.id)
        .order_by(Course.id)
    )
    return [(course, role) for course, role in rows]


def assign(
    *, session: Session, course: Course, problem: str, due_at: datetime | None
) -> Assignment:
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


def learners_of(*, session: Session, course: Course) -> list[User]:
    return list(
        session.scalars(
            select(User)
            .join(CourseMember, CourseMember.user_id == User.id)
            .where(CourseMember.course_id == course.id, CourseMember.role == MemberRole.LEARNER)
            .order_by(User.name)
        )
    )
