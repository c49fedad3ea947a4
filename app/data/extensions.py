"""Extensions: a later due date for one learner or a group of learners on one
assignment, granted one at a time (dashboard, API, CLI) or in bulk (a list through
the API, a CSV upload). A bulk grant is all or nothing: every bad row is reported
and nothing changes until all are good. Granting again replaces the date.

A bulk grant is as short for the database as a single one: the assignments, learners
and groups its rows name are read in three queries and every row is checked before
anything is written; then, holding the course (on SQLite, the one write lock), the
same three queries check again (a learner removed meanwhile is refused), one DELETE
per problem removes the rows being replaced and one multi-row INSERT writes the new
ones. All of it is one transaction, which the caller commits: a crash or an error
before that commit leaves nothing of the upload behind."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from app.core import names
from app.core.csv_uploads import csv_rows
from app.data import courses, notifications
from app.data.assignments import course_date
from app.errors import InvalidInputError, NotFoundError
from app.models import Assignment, Course, CourseMember, Extension, User
from app.vocabulary import MemberRole


@dataclass(frozen=True)
class Grant:
    """One extension asked for: a learner's user name or a group's name."""

    problem: str
    due_at: datetime
    user: str = ""
    group: str = ""


@dataclass(frozen=True)
class _Named:
    """What a batch of grants names, as the course has it: its assignments of those
    problems, its learners of those names (by canonical name) and the groups in use."""

    assignments: dict[str, Assignment]
    learners: dict[str, int]
    groups: frozenset[str]


def _read(session: Session, course: Course, grants: list[Grant]) -> _Named:
    """Three queries, however many grants."""
    problems = {g.problem.strip() for g in grants}
    wanted = {names.canonical(g.user.strip()) for g in grants if g.user.strip()}
    groups = {g.group.strip() for g in grants if g.group.strip()}
    assignments = session.scalars(
        select(Assignment)
        .where(Assignment.course_id == course.id, Assignment.problem.in_(problems))
        .execution_options(populate_existing=True)  # read again under the hold, not remembered
    )
    learners = session.execute(
        select(User.canonical_name, User.id)
        .join(CourseMember, CourseMember.user_id == User.id)
        .where(
            CourseMember.course_id == course.id,
            CourseMember.role == MemberRole.LEARNER,
            User.canonical_name.in_(wanted),
        )
    ).all()
    used = session.scalars(
        select(CourseMember.group_name)
        .where(CourseMember.course_id == course.id, CourseMember.group_name.in_(groups))
        .distinct()
    )
    return _Named({a.problem: a for a in assignments}, dict(learners), frozenset(used))


def _why_not(named: _Named, grant: Grant) -> str | None:
    if bool(grant.user.strip()) == bool(grant.group.strip()):
        return "name a learner or a group, not both"
    assignment = named.assignments.get(grant.problem.strip())
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
    if grant.user.strip() and names.canonical(grant.user.strip()) not in named.learners:
        return f"{grant.user.strip()[:64]!r} is not a learner in this course"
    if grant.group.strip() and grant.group.strip() not in named.groups:
        return f"no learner is in the group {grant.group.strip()[:60]!r}"
    return None


def _refuse_bad(named: _Named, numbered: list[tuple[str, Grant]], unreadable: list[str]) -> None:
    """An InvalidInputError naming every bad row (the first 50), if any is bad."""
    problems = [f"{where}: {why}" for where, g in numbered if (why := _why_not(named, g))]
    problems = sorted(problems + unreadable, key=_row_number)
    if problems:
        shown = problems[:50] + ([f"and {len(problems) - 50} more"] if len(problems) > 50 else [])
        raise InvalidInputError("Nothing was changed. " + "; ".join(shown) + ".")


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
    grants = [grant for _where, grant in numbered]
    _refuse_bad(_read(session, course, grants), numbered, unreadable or [])  # nothing held yet
    courses.hold(
        session=session, course=course
    )  # two grants at once: one after the other, one row each
    named = _read(session, course, grants)
    _refuse_bad(named, numbered, [])
    made = _replace(session, course, named, grants, by)
    _tell_learners(session, course, made)
    return made


def _tell_learners(session: Session, course: Course, made: list[Extension]) -> None:
    """Mail each learner an extension covers (a group's: each learner in it)."""
    groups = {e.group_name for e in made if e.user_id is None}
    in_group: dict[str, list[int]] = {}
    if groups:  # one query for every group named; none for learners named one by one
        rows = session.execute(
            select(CourseMember.user_id, CourseMember.group_name).where(
                CourseMember.course_id == course.id,
                CourseMember.role == MemberRole.LEARNER,
                CourseMember.group_name.in_(groups),
            )
        )
        for user_id, group in rows:
            in_group.setdefault(group, []).append(user_id)
    covered = {
        e.id: [e.user_id] if e.user_id is not None else in_group.get(e.group_name, []) for e in made
    }
    notifications.extensions_granted(session=session, course=course, granted=made, learners=covered)


def _replace(
    session: Session, course: Course, named: _Named, grants: list[Grant], by: User
) -> list[Extension]:
    """Write checked grants: one DELETE per problem of the rows they replace, one
    INSERT of them all; a learner or group named twice for a problem gets the later."""
    rows: dict[tuple[str, int | None, str], dict[str, object]] = {}
    for grant in grants:
        learner = (
            named.learners.get(names.canonical(grant.user.strip())) if grant.user.strip() else None
        )
        problem, group = grant.problem.strip(), "" if learner else grant.group.strip()
        rows[(problem, learner, group)] = {
            "course_id": course.id,
            "problem": problem,
            "user_id": learner,
            "group_name": group,
            "due_at": course_date(grant.due_at, "new due date"),
            "created_by": by.id,
        }
    for problem in sorted({problem for problem, _learner, _group in rows}):
        learners = [user for p, user, _group in rows if p == problem and user is not None]
        groups = [group for p, user, group in rows if p == problem and user is None]
        replaced = Extension.user_id.in_(learners) | (
            Extension.user_id.is_(None) & Extension.group_name.in_(groups)
        )
        session.execute(
            delete(Extension)
            .where(Extension.course_id == course.id, Extension.problem == problem, replaced)
            .execution_options(synchronize_session=False)
        )
    if not rows:  # an INSERT given no rows would insert one of defaults
        return []
    # Pages of a thousand rows (insertmanyvalues); asking for the rows back in the order
    # given would cost a statement per row on SQLite, so they are put in order here.
    made = session.scalars(insert(Extension).returning(Extension), list(rows.values()))
    return sorted(made, key=lambda extension: extension.id)


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


class Granted:
    """A course's extensions by learner and by group: a learner's extended due date in
    two look-ups, however many extensions the course has (5,000 learners' windows are
    read at once when an upload's grades are recomputed)."""

    def __init__(self, extensions: list[Extension]) -> None:
        self._dates: dict[tuple[int | str, str], datetime] = {}
        for e in extensions:
            key: tuple[int | str, str] = (
                (e.user_id, e.problem) if e.user_id is not None else (e.group_name, e.problem)
            )
            if e.user_id is not None or e.group_name:
                self._dates[key] = max(e.due_at, self._dates.get(key, e.due_at))

    def learner_due(self, *, user_id: int, group: str, problem: str) -> datetime | None:
        """The learner's extended due date on ``problem``: the later of their own and
        their group's, or None."""
        own = self._dates.get((user_id, problem))
        groups = self._dates.get((group, problem)) if group else None
        dates = [d for d in (own, groups) if d is not None]
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
