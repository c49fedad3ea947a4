"""How many runs a grading process holds (grader/parking.py ``ParkingLot.bound``): the
setting where it is set, otherwise what the memory left holds. No child is started: the
bound is decided before one is kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from grader.parking import HELD_RUN_MB, HELD_WHERE_MEMORY_IS_UNKNOWN, MOST_HELD, ParkingLot
from grader.running import available_memory

FLOOR_MB = 2048


@pytest.fixture
def lot() -> Iterator[ParkingLot]:
    held = ParkingLot(seconds=60, limit=None, min_available_mb=FLOOR_MB)
    yield held
    held.close()


def left(monkeypatch: pytest.MonkeyPatch, mb: int | None) -> None:
    monkeypatch.setattr(available_memory, "available_mb", lambda: mb)


def test_unset_the_bound_is_what_the_memory_above_the_floor_holds(
    lot: ParkingLot, monkeypatch: pytest.MonkeyPatch
) -> None:
    left(monkeypatch, FLOOR_MB + 3 * HELD_RUN_MB + HELD_RUN_MB // 2)
    assert lot.bound() == 3
    left(monkeypatch, FLOOR_MB + 100 * HELD_RUN_MB)
    assert lot.bound() == MOST_HELD
    left(monkeypatch, FLOOR_MB - 1)  # short already: none held, none more
    assert lot.bound() == 0
    left(monkeypatch, None)  # unreadable
    assert lot.bound() == HELD_WHERE_MEMORY_IS_UNKNOWN
    assert lot.enabled


def test_a_set_bound_is_kept_whatever_the_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    left(monkeypatch, FLOOR_MB + 100 * HELD_RUN_MB)
    for limit in (0, 2):
        fixed = ParkingLot(seconds=60, limit=limit, min_available_mb=FLOOR_MB)
        try:
            assert fixed.bound() == limit
            assert fixed.enabled is (limit > 0)
        finally:
            fixed.close()
