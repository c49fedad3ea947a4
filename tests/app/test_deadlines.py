"""The window and late-policy maths (app/reports/deadlines.py), case by case."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from app.models import Assignment
from app.reports import deadlines

OPENS = datetime(2026, 11, 1)
DUE = datetime(2026, 12, 1, 12, 0)


def assignment(**settings: object) -> Assignment:
    values: dict[str, object] = {
        "problem": "p", "opens_at": OPENS, "due_at": DUE, "late_policy": "none",
        "late_cutoff_at": None, "penalty_percent": 0.0, "penalty_unit": "day",
        "penalty_floor_percent": 0.0, "max_points": 10.0,
    }  # fmt: skip
    return Assignment(**(values | settings))


def standing(a: Assignment, at: datetime, extension: datetime | None = None) -> deadlines.Standing:
    return deadlines.standing(a, deadlines.deadline_for(a, extension), at)


def test_before_the_opening_nothing_counts_and_on_time_everything_does() -> None:
    a = assignment()
    assert standing(a, OPENS - timedelta(seconds=1)).counts is False
    assert standing(a, OPENS - timedelta(seconds=1)).why_not == "made before the assignment opened"
    assert standing(a, DUE) == deadlines.Standing(True, False, 1.0)


def test_without_a_policy_late_work_counts_in_full_and_is_marked() -> None:
    assert standing(assignment(), DUE + timedelta(days=30)) == deadlines.Standing(True, True, 1.0)


def test_a_cutoff_policy_refuses_work_after_the_cutoff_or_else_the_due_date() -> None:
    cutoff = DUE + timedelta(days=2)
    a = assignment(late_policy="cutoff", late_cutoff_at=cutoff)
    assert standing(a, cutoff) == deadlines.Standing(True, True, 1.0)
    assert standing(a, cutoff + timedelta(minutes=1)).counts is False
    strict = assignment(late_policy="cutoff")
    assert standing(strict, DUE + timedelta(minutes=1)).why_not == "made after the late cut-off"


@pytest.mark.parametrize(
    ("late_by", "unit", "kept"),
    [
        (timedelta(minutes=1), "day", 0.9),  # a started day is a day
        (timedelta(days=1), "day", 0.9),
        (timedelta(days=1, seconds=1), "day", 0.8),
        (timedelta(days=9), "day", 0.25),  # the floor
        (timedelta(hours=2, minutes=5), "hour", 0.7),
    ],
)
def test_a_penalty_per_started_unit_down_to_the_floor(
    late_by: timedelta, unit: str, kept: float
) -> None:
    a = assignment(
        late_policy="penalty", penalty_percent=10.0, penalty_unit=unit, penalty_floor_percent=25.0
    )
    assert standing(a, DUE + late_by).factor == pytest.approx(kept)


def test_an_extension_moves_the_due_date_and_the_cutoff_by_as_much() -> None:
    a = assignment(late_policy="cutoff", late_cutoff_at=DUE + timedelta(days=1))
    extended = DUE + timedelta(days=3)
    window = deadlines.deadline_for(a, extended)
    assert (window.due_at, window.cutoff_at, window.extended) == (
        extended,
        extended + timedelta(days=1),
        True,
    )
    assert standing(a, DUE + timedelta(days=2), extended) == deadlines.Standing(True, False, 1.0)


def test_the_policy_reads_as_a_phrase() -> None:
    a = assignment(late_policy="penalty", penalty_percent=10.0, penalty_floor_percent=50.0)
    assert deadlines.describe(a) == "late work loses 10% per started day, never below 50%"
    assert deadlines.describe(assignment(late_policy="cutoff")) == "late work does not count"


def test_an_extension_left_behind_by_a_later_due_date_is_not_in_force() -> None:
    a = assignment(late_policy="cutoff", late_cutoff_at=DUE + timedelta(days=1))
    window = deadlines.deadline_for(a, DUE - timedelta(days=2))
    assert (window.due_at, window.cutoff_at, window.extended) == (
        DUE,
        DUE + timedelta(days=1),
        False,
    )


def test_a_learner_added_by_name_opens_when_they_were_added() -> None:
    a = assignment()
    added = a.opens_at + timedelta(days=3)
    window = deadlines.deadline_for(a, None, added)
    assert window.opens_at == added
    before = deadlines.standing(a, window, added - timedelta(hours=1))
    assert (before.counts, before.why_not) == (False, "made before an instructor added the learner")
