"""Extensions: a later due date for one learner or a group of learners on one
assignment, granted one at a time (dashboard, API, CLI) or in bulk (a list through
the API, a CSV upload). A bulk grant is all or nothing: every bad row is reported
and nothing changes until all are good. Granting again replaces the date."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.core import names
from app.core.csv_uploads import csv_rows
from app.data import courses
from app.data.assignments import course_date
from app.data.assignments import find as find_assignment
from app.errors import InvalidInputError, NotFoundError
from app.models import Course, CourseMember, Extension, User
from app.vocabulary import MemberRole


@dataclass(frozen=True)
class Grant:
    """One extension asked for: a learner's user name or a group's name."""

    problem: str
    due_at: datetime
    user: str = ""
    group: str = ""


def _learner(session: Session, course: Course, name: str) -> User | None:
    return session.scalar(
        select(User)
        .join(CourseMember, CourseMember.user_id == User.id)
        .where(
            User.canonical_name == names.canonical(name.strip()),
            CourseMember.course_id == course.id,
            CourseMember.role == MemberRole.LEARNER,
        )
    )


def _why_not(session: Session, course: Course, grant: Grant) -> str | None:
    if bool(grant.user.strip()) == bool(grant.group.strip()):
        return "name a learner or a group, not both"
    assignment = find_assignment(session=session, course=course, problem=grant.problem.strip())
    if assignment is None or assignment.removed_at is not None:
        return f"{grant.problem.strip()[:100]!r} is not assigned in this course"
    if assignment.due_at is None:
        return f"{grant.problem.strip()!r} has no due date to extend"
    try:
        due = course_date(grant.due_at, "new due date")
    except InvalidInputError as error:
        return str(error).rstrip(".").lower()
    if due <= assignment.due_at:
        return (
            "an extension is later than the assignment's due date"
            f" ({assignment.due_at:%Y-%m-%d %H:%M} UTC)"
        )
    if grant.user.strip() and _learner(session, course, grant.user) is None:
        return f"{grant.user.strip()[:64]!r} is not a learner in this course"
    if grant.group.strip() and not session.scalar(
        select(CourseMember.id).where(
            CourseMember.course_id == course.id, CourseMember.group_name == grant.group.strip()
        )
    ):
        return f"no learner is in the group {grant.group.strip()[:60]!r}"
    return None


def grant_all(
    *, session: Session, course: Course, grants: list[Grant], by: User
) -> list[Extension]:
    """Grant every extension, or none: an InvalidInputError names each bad one
    (numbered from 1, or by CSV row through ``from_csv``)."""
    return _grant(session, course, [(f"item {n}", g) for n, g in enumerate(grants, 1)], by)


def _grant(
    session: Session,
    course: Course,
    numbered: list[tuple[str, Grant]],
    by: User,
    unreadable: list[str] | None = None,
) -> list[Extension]:
    courses.hold(session, course)  # two grants at once: one after the other, one row each
    problems = [f"{where}: {why}" for where, g in numbered if (why := _why_not(session, course, g))]
    problems = sorted(problems + (unreadable or []), key=_row_number)
    if problems:
        shown = problems[:50] + ([f"and {len(problems) - 50} more"] if len(problems) > 50 else [])
        raise InvalidInputError("Nothing was changed. " + "; ".join(shown) + ".")
    made = []
    for _where, grant in numbered:
        learner = _learner(session, course, grant.user) if grant.user.strip() else None
        problem = grant.problem.strip()
        match = (
            Extension.user_id == learner.id
            if learner
            else (Extension.user_id.is_(None)) & (Extension.group_name == grant.group.strip())
        )
        session.execute(
            delete(Extension).where(
                Extension.course_id == course.id, Extension.problem == problem, match
            )
        )
        extension = Extension(
            course_id=course.id,
            problem=problem,
            user_id=learner.id if learner else None,
            group_name="" if learner else grant.group.strip(),
            due_at=course_date(grant.due_at, "new due date"),
            created_by=by.id,
        )
        session.add(extension)
        made.append(extension)
    session.flush()
    return made


def parse_due(text: str) -> datetime:
    """ISO 8601 (``2026-12-01T23:59``, a space for the T, an offset or Z); UTC without one."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(
            f"{text.strip()[:40]!r} is not a date like 2026-12-01T23:59 (UTC) or"
            " 2026-12-01T23:59+01:00"
        ) from None
    return course_date(moment, "due date")


def from_csv(*, session: Session, course: Course, text: str, by: User) -> list[Extension]:
    """A CSV with a header row naming ``problem``, ``due_at`` (or ``due``) and ``user``
    or ``group`` columns: all rows granted, or none and every bad row reported."""
    upload = csv_rows(text)
    header = {name.strip().lower() for name in upload.header}
    due_column = "due_at" if "due_at" in header else "due"
    if "problem" not in header or due_column not in header or not header & {"user", "group"}:
        raise InvalidInputError(
            "Nothing was changed: the CSV's first row names its columns: user (or group),"
            " problem, due_at."
        )
    numbered: list[tuple[str, Grant]] = []
    bad: list[str] = []
    for line, row in upload.records():
        try:
            due = parse_due(row.get(due_column, ""))
        except InvalidInputError as error:
            bad.append(f"row {line}: {error}")
            continue
        grant = Grant(row.get("problem", ""), due, row.get("user", ""), row.get("group", ""))
        numbered.append((f"row {line}", grant))
    if not numbered and not bad:
        raise InvalidInputError("Nothing was changed: the CSV has no rows.")
    return _grant(session, course, numbered, by, unreadable=bad)


def _row_number(problem: str) -> int:
    found = re.match(r"(?:row|item) (\d+)", problem)
    return int(found.group(1)) if found else 0


def remove(*, session: Session, course: Course, extension_id: int) -> tuple[str, list[int]]:
    """Take an extension back; returns its problem and the learners it covered."""
    found = session.get(Extension, extension_id)
    if found is None or found.course_id != course.id:
        raise NotFoundError(f"No extension {extension_id} in this course.")
    covered = affected_learners(session=session, course=course, extension=found)
    session.delete(found)
    session.flush()
    return found.problem, covered


def of_course(*, session: Session, course: Course) -> list[Extension]:
    return list(
        session.scalars(
            select(Extension)
            .where(Extension.course_id == course.id)
            .order_by(Extension.problem, Extension.group_name, Extension.user_id)
        )
    )


def learner_due(
    extensions: list[Extension], *, user_id: int, group: str, problem: str
) -> datetime | None:
    """The learner's extended due date on ``problem``: the later of their own and their
    group's, or None."""
    dates = [
        e.due_at
        for e in extensions
        if e.problem == problem
        and (e.user_id == user_id or (e.user_id is None and group and e.group_name == group))
    ]
    return max(dates) if dates else None


def affected_learners(*, session: Session, course: Course, extension: Extension) -> list[int]:
    if extension.user_id is not None:
        return [extension.user_id]
    return list(
        session.scalars(
            select(CourseMember.user_id).where(
                CourseMember.course_id == course.id,
                CourseMember.role == MemberRole.LEARNER,
                CourseMember.group_name == extension.group_name,
            )
        )
    )
