"""Courses: creating and joining them, membership, assignments (keyword-only data
functions). What instructors read of a course is in app/reports/."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.core import throttle
from app.errors import ForbiddenError, InvalidInputError, NotFoundError, TooManyError
from app.models import (
    Course,
    CourseMember,
    CourseVerdict,
    Enrolment,
    PastVerdict,
    Regrade,
    User,
)
from app.vocabulary import COURSE_CREATOR_ROLES, STAFF_ROLES, IdSource, MemberRole

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


def join_course(
    *, session: Session, code: str, user: User, address: str, student_id: str = ""
) -> Course:
    """Join by code. A code is the only key to a course, so wrong ones are throttled like
    passwords, per account and per address (``address``: the client's,
    app/core/throttle.py): ten an account a quarter of an hour, twenty an address in
    five minutes, where one client once tried a hundred a second.

    A course that requires a student id (``Course.requires_student_id``) takes a new
    learner who has none only with one (``student_id``), kept on the account as
    self-declared; an account that has one joins as it is."""
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
        _ask_student_id(course, user, student_id)
        session.add(CourseMember(course_id=course.id, user_id=user.id, role=MemberRole.LEARNER))
    enrol(session=session, course=course, user=user, how="code")
    session.flush()
    return course


def _ask_student_id(course: Course, user: User, student_id: str) -> None:
    if not course.requires_student_id or user.student_id.strip():
        return
    student_id = student_id.strip()
    if not student_id:
        raise InvalidInputError(
            f"{course.name} asks for your student id: enter it with the join code."
        )
    if len(student_id) > 64:
        raise InvalidInputError("A student id is at most 64 characters.")
    user.student_id, user.student_id_source = student_id, IdSource.SELF_DECLARED


def set_requires_student_id(*, session: Session, course: Course, required: bool) -> None:
    course.requires_student_id = required
    session.flush()


def enrol(*, session: Session, course: Course, user: User, how: str) -> None:
    """``user`` enrolled themselves (``code``) or their LMS did (``lms``): all their
    work in each assignment's window counts from now on, including work done before
    they joined (app/models.py, Enrolment)."""
    found = session.scalar(
        select(Enrolment.id).where(Enrolment.course_id == course.id, Enrolment.user_id == user.id)
    )
    if found is None:
        session.add(Enrolment(course_id=course.id, user_id=user.id, how=how))


def hold(*, session: Session, course: Course) -> None:
    """Hold the course's row until the transaction ends (a write of nothing, which
    every database locks for: a row lock on PostgreSQL, the write lock on SQLite), so
    two changes that check the course and then write, such as removing the last
    instructors at once or starting two similarity reports, run one after the other."""
    session.execute(update(Course).where(Course.id == course.id).values(id=Course.id))


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
    """Instructors only: assignments, extensions, members and staff, regrades, the LMS."""
    if found.role is not MemberRole.INSTRUCTOR:
        raise ForbiddenError("Only the course's instructors can do this.")
    return found


def as_staff(found: CourseAccess) -> CourseAccess:
    """Instructors and teaching assistants: the dashboard, timelines, exports,
    comments, overrides, similarity reports."""
    if found.role not in STAFF_ROLES:
        raise ForbiddenError("Only the course's staff can see this.")
    return found


def delete_course(*, session: Session, course: Course, confirm_name: str) -> None:
    """Delete the course and everything that is only the course's (memberships,
    assignments, extensions, overrides, comments, its regrades and LMS links, and its own
    problems, by the database's cascade); the learners' submissions stay theirs, and so do
    the problem versions they name, with what those versions' checks kept
    (``ProblemVersionProduct``): a submission's history still shows its version, and one
    still queued is graded from them. ``confirm_name`` must be the course's name."""
    if confirm_name.strip() != course.name:
        raise InvalidInputError("Type the course's name exactly to delete it.")
    regrade_ids = select(Regrade.id).where(Regrade.course_id == course.id)
    # Platform-wide history keeps its rows; it only forgets which regrade made them.
    session.execute(
        update(PastVerdict).where(PastVerdict.regrade_id.in_(regrade_ids)).values(regrade_id=None)
    )
    session.execute(delete(CourseVerdict).where(CourseVerdict.course_id == course.id))
    session.execute(delete(Course).where(Course.id == course.id))
    session.flush()


def courses_of(*, session: Session, user: User) -> list[tuple[Course, str]]:
    rows = session.execute(
        select(Course, CourseMember.role)
        .join(CourseMember, CourseMember.course_id == Course.id)
        .where(CourseMember.user_id == user.id)
        .order_by(Course.id)
    )
    return [(course, role) for course, role in rows]


def members_of(*, session: Session, course: Course) -> list[tuple[User, str]]:
    """Everyone in the course with their role: instructors, assistants, learners, each
    by name."""
    rows = session.execute(
        select(User, CourseMember.role)
        .join(CourseMember, CourseMember.user_id == User.id)
        .where(CourseMember.course_id == course.id)
        .order_by(User.name)
    )
    order = {role: rank for rank, role in enumerate(MemberRole)}
    return sorted(((u, r) for u, r in rows), key=lambda row: order[MemberRole(row[1])])


def course_learner(*, session: Session, course: Course, learner_id: int) -> User:
    """A learner of the course, or NotFoundError (instructors are not graded)."""
    learner = session.get(User, learner_id)
    role = membership(session=session, course=course, user=learner) if learner else None
    if learner is None or role != MemberRole.LEARNER:
        raise NotFoundError("No such learner in this course.")
    return learner


def learners_of(*, session: Session, course: Course) -> list[User]:
    return list(
        session.scalars(
            select(User)
            .join(CourseMember, CourseMember.user_id == User.id)
            .where(CourseMember.course_id == course.id, CourseMember.role == MemberRole.LEARNER)
            .order_by(User.name)
        )
    )
