"""A course's assignments: assigning a problem with its window, late policy and
points, moving them, and unassigning (the row is kept, marked removed, so its
history and a later re-assignment find it). The maths of windows and penalties is
app/reports/deadlines.py's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.data import course_problems
from app.errors import ConflictError, InvalidInputError, NotFoundError
from app.models import Assignment, Course, utcnow
from app.vocabulary import LatePolicy, RubricMode

MAX_POINTS = 10_000.0
# Course dates live in this span: a typo like 9999 or 0202 is refused in words
# rather than overflowing the calendar when an offset or an extension moves it.
EARLIEST = datetime(2000, 1, 1)
LATEST = datetime(2200, 1, 1)


def utc_naive(moment: datetime) -> datetime:
    """Dates are stored naive in UTC: one with an offset is converted, not cut off."""
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


def course_date(moment: datetime, what: str) -> datetime:
    """``moment`` in naive UTC, or InvalidInputError naming ``what`` when it falls
    outside the years 2000-2199."""
    try:
        found = utc_naive(moment)
    except OverflowError:  # 0001-01-01 with a positive offset leaves the calendar
        found = None
    if found is None or not EARLIEST <= found < LATEST:
        raise InvalidInputError(f"The {what} must fall between the years 2000 and 2199.")
    return found


class PastDueError(ConflictError):
    """A due date in the past, not confirmed: the page and the API ask again."""


@dataclass(frozen=True)
class AssignmentSettings:
    """What an instructor sets on an assignment; times in any offset (kept in UTC).
    ``opens_at`` None: when it is first assigned (unchanged on a re-assignment)."""

    due_at: datetime | None = None
    opens_at: datetime | None = None
    late_policy: LatePolicy = LatePolicy.NONE
    late_cutoff_at: datetime | None = None
    penalty_percent: float = 0.0
    penalty_unit: str = "day"
    penalty_floor_percent: float = 0.0
    max_points: float = 10.0
    rubric_mode: RubricMode = RubricMode.ADDED  # how its rubric meets the automatic score
    notebook: str | None = None  # the notebook assignment it is part of (by name)

    def normalized(self) -> AssignmentSettings:
        def utc(moment: datetime | None, what: str) -> datetime | None:
            return None if moment is None else course_date(moment, what)

        return replace(
            self,
            due_at=utc(self.due_at, "due date"),
            opens_at=utc(self.opens_at, "opening time"),
            late_cutoff_at=utc(self.late_cutoff_at, "late cut-off"),
            notebook=" ".join((self.notebook or "").split()) or None,
        )

    def check(self) -> None:
        """Every rule an assignment's settings keep, each refused in one sentence."""
        if self.late_policy not in tuple(LatePolicy):
            raise InvalidInputError("The late policy is none, cutoff or penalty.")
        if self.late_policy is not LatePolicy.NONE and self.due_at is None:
            raise InvalidInputError("A late policy needs a due date.")
        if self.opens_at and self.due_at and self.due_at < self.opens_at:
            raise InvalidInputError("The due date is before the assignment opens.")
        if self.late_cutoff_at and self.due_at and self.late_cutoff_at < self.due_at:
            raise InvalidInputError("The late cut-off is before the due date.")
        if self.rubric_mode not in tuple(RubricMode):
            raise InvalidInputError("The rubric mode is added or replacing.")
        if self.penalty_unit not in ("day", "hour"):
            raise InvalidInputError("The penalty is per day or per hour.")
        for name, value in (
            ("penalty per unit", self.penalty_percent),
            ("penalty floor", self.penalty_floor_percent),
        ):
            if not 0.0 <= value <= 100.0:
                raise InvalidInputError(f"The {name} is a percentage from 0 to 100.")
        if self.notebook is not None and (
            len(self.notebook) > 100 or not self.notebook.isprintable()
        ):
            raise InvalidInputError("A notebook's name is at most 100 printable characters.")
        if not 0.0 < self.max_points <= MAX_POINTS:
            raise InvalidInputError(
                f"An assignment is worth more than 0 and at most {MAX_POINTS:g} points."
            )


def find(*, session: Session, course: Course, problem: str) -> Assignment | None:
    """The course's assignment of ``problem``, unassigned ones included."""
    return session.scalar(
        select(Assignment).where(Assignment.course_id == course.id, Assignment.problem == problem)
    )


def assign(
    *,
    session: Session,
    course: Course,
    problem: str,
    due_at: datetime | None = None,
    settings: AssignmentSettings | None = None,
    confirm_past_due: bool = True,
) -> Assignment:
    """Assign ``problem``, or change its settings (re-assigning an unassigned one
    restores it). A due date in the past raises PastDueError unless confirmed. Another
    course's own problem does not exist here (NotFoundError)."""
    if not course_problems.in_course_scope(session=session, slug=problem, course_id=course.id):
        raise NotFoundError(f"Unknown problem {problem!r}.")
    wanted = (settings or AssignmentSettings(due_at=due_at)).normalized()
    wanted.check()
    existing = find(session=session, course=course, problem=problem)
    moved = existing is None or existing.due_at != wanted.due_at
    if moved and wanted.due_at is not None and wanted.due_at < utcnow() and not confirm_past_due:
        raise PastDueError(
            f"The due date {wanted.due_at:%Y-%m-%d %H:%M} UTC is in the past: every submit"
            " from now on is late. Confirm to assign it anyway."
        )
    now = utcnow()
    opens_at = wanted.opens_at or (existing.opens_at if existing else now)
    if wanted.due_at is not None and wanted.due_at < opens_at:
        raise InvalidInputError("The due date is before the assignment opens.")
    assignment = existing or Assignment(course_id=course.id, problem=problem, assigned_at=now)
    if existing is None:
        session.add(assignment)
    assignment.opens_at = opens_at
    assignment.removed_at = None
    assignment.due_at = wanted.due_at
    assignment.late_policy = wanted.late_policy
    assignment.late_cutoff_at = wanted.late_cutoff_at
    assignment.penalty_percent = wanted.penalty_percent
    assignment.penalty_unit = wanted.penalty_unit
    assignment.penalty_floor_percent = wanted.penalty_floor_percent
    assignment.max_points = wanted.max_points
    assignment.rubric_mode = wanted.rubric_mode
    assignment.notebook = wanted.notebook
    session.flush()
    return assignment


def move_due(*, assignment: Assignment, due_at: datetime) -> None:
    """Move the due date only (an LMS line item's), the cut-off by as much."""
    due_at = course_date(due_at, "due date")
    if assignment.late_cutoff_at is not None and assignment.due_at is not None:
        assignment.late_cutoff_at = max(
            assignment.late_cutoff_at + (due_at - assignment.due_at), due_at
        )
    assignment.due_at = max(due_at, assignment.opens_at)


def unassign(*, session: Session, course: Course, problem: str) -> Assignment:
    """Take ``problem`` off the course's grade book; its submits and settings stay."""
    assignment = find(session=session, course=course, problem=problem)
    if assignment is None or assignment.removed_at is not None:
        raise NotFoundError(f"{problem!r} is not assigned in this course.")
    assignment.removed_at = utcnow()
    session.flush()
    return assignment


def assignments_of(*, session: Session, course: Course) -> list[Assignment]:
    """The course's current assignments, in the order they were made."""
    return list(
        session.scalars(
            select(Assignment)
            .where(Assignment.course_id == course.id, Assignment.removed_at.is_(None))
            .order_by(Assignment.id)
        )
    )


def removed_of(*, session: Session, course: Course) -> list[Assignment]:
    return list(
        session.scalars(
            select(Assignment)
            .where(Assignment.course_id == course.id, Assignment.removed_at.is_not(None))
            .order_by(Assignment.id)
        )
    )


def assigned(*, session: Session, course: Course, slug: str) -> Assignment:
    """The course's current assignment of ``slug``, or NotFoundError."""
    assignment = find(session=session, course=course, problem=slug)
    if assignment is None or assignment.removed_at is not None:
        raise NotFoundError(f"{slug!r} is not assigned in this course.")
    return assignment


def require_assigned(*, session: Session, course: Course, slug: str) -> None:
    assigned(session=session, course=course, slug=slug)
