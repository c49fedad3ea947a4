"""Who is in a course and as what: instructors add and remove learners, teaching
assistants and co-instructors, put learners in groups (sections, accommodations:
an extension can name a group) and map them to the university's student ids.

A learner who joins by themselves (a join code, an LMS launch or roster) has all
their work in an assignment's window counted. One an instructor adds by name has
only their work from that moment on counted, and shown to the course, until they
join by themselves: adding an account by name must not open its earlier code to
whoever added it.

Removing a member deletes the membership only: their submits and their enrolment
stay, so adding them back brings their grades back unchanged. A course always keeps
an instructor."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, delete, func, select, update
from sqlalchemy.orm import Session

from app.core import names
from app.core.csv_uploads import csv_rows
from app.data import courses
from app.errors import ConflictError, InvalidInputError, NotFoundError
from app.models import Course, CourseMember, Enrolment, User
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


def instructor_count(*, session: Session, course: Course) -> int:
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
    courses.hold(session=session, course=course)  # two instructors demoting each other at once
    member = _row(session, course, user.id)
    if member is None:
        member = CourseMember(course_id=course.id, user_id=user.id, role=role)
        session.add(member)
    elif (
        member.role == MemberRole.INSTRUCTOR
        and role != MemberRole.INSTRUCTOR
        and instructor_count(session=session, course=course) <= 1
    ):
        raise ConflictError("A course keeps at least one instructor.")
    member.role = role
    session.flush()
    return member


def remove(*, session: Session, course: Course, user_id: int) -> None:
    courses.hold(
        session=session, course=course
    )  # the last two instructors removing each other at once
    member = _row(session, course, user_id)
    if member is None:
        raise NotFoundError("No such member in this course.")
    if (
        member.role == MemberRole.INSTRUCTOR
        and instructor_count(session=session, course=course) <= 1
    ):
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


def counted_from(*, session: Session, course: Course) -> dict[int, datetime]:
    """Learners added by name who never enrolled themselves (no Enrolment): when
    their work starts to count."""
    rows = session.execute(
        select(CourseMember.user_id, CourseMember.joined_at)
        .outerjoin(
            Enrolment,
            (Enrolment.course_id == CourseMember.course_id)
            & (Enrolment.user_id == CourseMember.user_id),
        )
        .where(
            CourseMember.course_id == course.id,
            CourseMember.role == MemberRole.LEARNER,
            Enrolment.id.is_(None),
        )
    )
    return {user_id: moment for user_id, moment in rows}


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


def student_ids_from_csv(*, session: Session, course: Course, text: str) -> int:
    """Set the course's student ids from a CSV of ``user,student_id`` rows (a header
    first), all or none: every bad row is reported in one InvalidInputError, by its
    line in the file, and nothing changes. The members are found in one query and the
    ids written in one statement (5,000 rows hold the database for milliseconds)."""
    rows = [(line, row[0], row[1] if len(row) > 1 else "") for line, row in csv_rows(text).rows]
    return _map_student_ids(session, course, rows)


def _map_student_ids(session: Session, course: Course, rows: list[tuple[int, str, str]]) -> int:
    wanted = {names.canonical(name.strip()) for _line, name, _student_id in rows}
    members = dict(
        session.execute(
            select(User.canonical_name, CourseMember.id)
            .join(CourseMember, CourseMember.user_id == User.id)
            .where(CourseMember.course_id == course.id, User.canonical_name.in_(wanted))
        ).all()
    )
    problems: list[str] = []
    found: list[dict[str, object]] = []
    for line, name, student_id in rows:
        member = members.get(names.canonical(name.strip()))
        if member is None:
            problems.append(f"row {line}: {name.strip()[:64]!r} is not in this course")
        elif not 0 < len(student_id.strip()) <= STUDENT_ID_LIMIT:
            problems.append(f"row {line}: a student id is 1-{STUDENT_ID_LIMIT} characters")
        else:
            found.append({"member": member, "mapped": student_id.strip()})
    if not rows:
        raise InvalidInputError("Nothing was changed: the CSV has no rows.")
    if problems:
        shown = problems[:50] + ([f"and {len(problems) - 50} more"] if len(problems) > 50 else [])
        raise InvalidInputError("Nothing was changed. " + "; ".join(shown) + ".")
    # One executemany; a member removed since the read above is simply not there to set.
    table = cast(Table, CourseMember.__table__)
    session.execute(
        update(table)
        .where(table.c.id == bindparam("member"))
        .values(student_id=bindparam("mapped")),
        found,
    )
    return len(found)
