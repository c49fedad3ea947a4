"""Who is in a course and as what: instructors add and remove learners, teaching
assistants and co-instructors, put learners in groups (sections, accommodations:
an extension can name a group) and map them to the university's student ids.

Removing a member deletes the membership only: their submits stay, and since the
assignment's window (not the date they joined) decides what counts, adding them
back brings their grades back unchanged. A course always keeps an instructor."""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.core import names
from app.errors import ConflictError, InvalidInputError, NotFoundError
from app.models import Course, CourseMember, User
from app.vocabulary import MemberRole

GROUP_NAME_LIMIT = 60
STUDENT_ID_LIMIT = 64


def by_name(*, session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.canonical_name == names.canonical(name.strip())))
    if user is None:
        raise NotFoundError(f"No account is named {name.strip()[:64]!r}.")
    return user


def _row(session: Session, course: Course, user_id: int) -> CourseMember | None:
    return session.scalar(
        select(CourseMember).where(
            CourseMember.course_id == course.id, CourseMember.user_id == user_id
        )
    )


def _instructors(session: Session, course: Course) -> int:
    return (
        session.scalar(
            select(func.count())
            .select_from(CourseMember)
            .where(CourseMember.course_id == course.id, CourseMember.role == MemberRole.INSTRUCTOR)
        )
        or 0
    )


def add(*, session: Session, course: Course, user: User, role: MemberRole) -> CourseMember:
    """Add ``user`` with ``role``, or change the role of a member."""
    member = _row(session, course, user.id)
    if member is None:
        member = CourseMember(course_id=course.id, user_id=user.id, role=role)
        session.add(member)
    elif member.role == MemberRole.INSTRUCTOR and role != MemberRole.INSTRUCTOR:
        if _instructors(session, course) <= 1:
            raise ConflictError("A course keeps at least one instructor.")
        member.role = role
    else:
        member.role = role
    session.flush()
    return member


def remove(*, session: Session, course: Course, user_id: int) -> None:
    member = _row(session, course, user_id)
    if member is None:
        raise NotFoundError("No such member in this course.")
    if member.role == MemberRole.INSTRUCTOR and _instructors(session, course) <= 1:
        raise ConflictError("A course keeps at least one instructor.")
    session.execute(delete(CourseMember).where(CourseMember.id == member.id))
    session.flush()


def set_group(*, session: Session, course: Course, user_id: int, group: str) -> None:
    member = _row(session, course, user_id)
    if member is None:
        raise NotFoundError("No such member in this course.")
    if len(group.strip()) > GROUP_NAME_LIMIT:
        raise InvalidInputError(f"A group name is at most {GROUP_NAME_LIMIT} characters.")
    member.group_name = group.strip()
    session.flush()


def groups_of(*, session: Session, course: Course) -> dict[int, str]:
    """Each learner's group ("" for none)."""
    rows = session.execute(
        select(CourseMember.user_id, CourseMember.group_name).where(
            CourseMember.course_id == course.id, CourseMember.role == MemberRole.LEARNER
        )
    )
    return {user_id: group for user_id, group in rows}


def group_names(*, session: Session, course: Course) -> list[str]:
    return sorted({g for g in groups_of(session=session, course=course).values() if g})


def student_ids_of(*, session: Session, course: Course) -> dict[int, str]:
    """Each member's student id: the instructor's mapping, else the one the learner set."""
    rows = session.execute(
        select(CourseMember.user_id, CourseMember.student_id, User.student_id)
        .join(User, User.id == CourseMember.user_id)
        .where(CourseMember.course_id == course.id)
    )
    return {user_id: mapped or own for user_id, mapped, own in rows}


def map_student_ids(*, session: Session, course: Course, rows: list[tuple[str, str]]) -> int:
    """Set the course's student ids from (user name, student id) rows, all or none:
    every bad row is reported in one InvalidInputError and nothing changes."""
    problems: list[str] = []
    found: list[tuple[CourseMember, str]] = []
    for line, (name, student_id) in enumerate(rows, start=2):
        user = session.scalar(
            select(User).where(User.canonical_name == names.canonical(name.strip()))
        )
        member = _row(session, course, user.id) if user else None
        if member is None:
            problems.append(f"row {line}: {name.strip()[:64]!r} is not in this course")
        elif not 0 < len(student_id.strip()) <= STUDENT_ID_LIMIT:
            problems.append(f"row {line}: a student id is 1-{STUDENT_ID_LIMIT} characters")
        else:
            found.append((member, student_id.strip()))
    if problems:
        raise InvalidInputError("Nothing was changed. " + "; ".join(problems) + ".")
    for member, student_id in found:
        member.student_id = student_id
    session.flush()
    return len(found)
