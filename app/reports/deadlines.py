"""When a submit counts for an assignment, and for how much.

The roster says *who* (the course's learners); the window says *when*: a submit
counts from the assignment's opening time, whether its learner joined the course
before or after making it (a learner an instructor added by name counts from when
they were added, unless they join by themselves). After the learner's due date (the assignment's, or an
extension's) it is late, and the late policy decides:

- ``none``: late work counts in full and is marked late;
- ``cutoff``: it counts in full until the cut-off (the due date when none is set),
  not at all after;
- ``penalty``: it loses ``penalty_percent`` of its score per *started* day or hour
  late (a minute late is one unit, as Canvas counts), never below
  ``penalty_floor_percent``; after the cut-off, if one is set, it does not count.

An extension moves the learner's due date and their cut-off by the same amount, so
the grace the policy gives after the due date is kept. All times are naive UTC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.models import Assignment
from app.vocabulary import LatePolicy

UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}


@dataclass(frozen=True)
class Deadline:
    """One learner's window on one assignment."""

    opens_at: datetime
    due_at: datetime | None
    cutoff_at: datetime | None  # nothing counts after it
    extended: bool  # due_at is an extension's
    added_later: bool = False  # opens when an instructor added the learner, after the opening


@dataclass(frozen=True)
class Standing:
    """What one submit is worth to the course."""

    counts: bool
    late: bool
    factor: float  # the share of its score it keeps
    why_not: str = ""  # for a submit that does not count, in words


def deadline_for(
    assignment: Assignment,
    extension_due: datetime | None = None,
    counted_from: datetime | None = None,
) -> Deadline:
    """``counted_from``: for a learner an instructor added by name, when they were
    added (app/data/members.py); their window opens then if that is later."""
    due = assignment.due_at
    policy = LatePolicy(assignment.late_policy)
    cutoff: datetime | None = None
    if policy is LatePolicy.CUTOFF:
        cutoff = assignment.late_cutoff_at or due
    elif policy is LatePolicy.PENALTY:
        cutoff = assignment.late_cutoff_at
    # Only a later date extends: one left behind by a due date moved past it is ignored.
    extended = extension_due is not None and due is not None and extension_due > due
    if extended and due is not None and extension_due is not None:
        if cutoff is not None:
            cutoff = max(cutoff + (extension_due - due), extension_due)
        due = extension_due
    opens = max(assignment.opens_at, counted_from) if counted_from else assignment.opens_at
    return Deadline(opens, due, cutoff, extended, opens != assignment.opens_at)


def standing(assignment: Assignment, deadline: Deadline, submitted_at: datetime) -> Standing:
    if submitted_at < deadline.opens_at:
        if deadline.added_later:
            return Standing(False, False, 0.0, "made before an instructor added the learner")
        return Standing(False, False, 0.0, "made before the assignment opened")
    if deadline.cutoff_at is not None and submitted_at > deadline.cutoff_at:
        return Standing(False, True, 0.0, "made after the late cut-off")
    if deadline.due_at is None or submitted_at <= deadline.due_at:
        return Standing(True, False, 1.0)
    if assignment.late_policy != LatePolicy.PENALTY:
        return Standing(True, True, 1.0)
    units = math.ceil((submitted_at - deadline.due_at) / UNITS[assignment.penalty_unit])
    kept = max(assignment.penalty_floor_percent, 100.0 - units * assignment.penalty_percent)
    return Standing(True, True, max(0.0, min(100.0, kept)) / 100.0)


def describe(assignment: Assignment) -> str:
    """The late policy in one phrase, for pages and exports."""
    policy = LatePolicy(assignment.late_policy)
    if assignment.due_at is None or policy is LatePolicy.NONE:
        return "late work counts in full"
    cutoff = assignment.late_cutoff_at
    until = f" until {cutoff:%Y-%m-%d %H:%M} UTC" if cutoff else ""
    if policy is LatePolicy.CUTOFF:
        return f"late work counts in full{until}" if cutoff else "late work does not count"
    floor = f", never below {assignment.penalty_floor_percent:g}%"
    return (
        f"late work loses {assignment.penalty_percent:g}% per started {assignment.penalty_unit}"
        f"{floor if assignment.penalty_floor_percent else ''}{'; counts' + until if until else ''}"
    )
