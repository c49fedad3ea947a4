"""A course's grade book as the API answers it, serialised once per course and grade-book
revision (app/core/grade_revision.py) and served as that copy until a commit moves the
revision on: for 300 learners and 23 assignments the answer is 2.8 MB that take about
half a second of Python to compute, and dashboards, scripts and LMS exports poll it.

The answer is the same for every member of the course's staff, so one copy serves them
all; access is checked on every read before the copy is looked at. A copy is served at
its own revision only (a database put back from a backup starts again from a lower one)
and is kept per database (tests open many, each with a course 1). Readers that miss
together wait for one computation (a lock per course) instead of each computing it. At
most ``MOST_COURSES_KEPT`` courses are kept, the least recently read dropped first."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel
from sqlalchemy.orm import Session

from app.api.hot_reads import Body
from app.core import grade_revision
from app.core.db import database_of
from app.models import Course

MOST_COURSES_KEPT = 32


@dataclass(frozen=True)
class _Kept:
    revision: int
    body: Body


CourseKey = tuple[str, int]  # the database's URL, the course's id
_kept: OrderedDict[CourseKey, _Kept] = OrderedDict()
_computing: dict[CourseKey, threading.Lock] = {}
_guard = threading.Lock()  # over the two dictionaries


def grade_book(session: Session, course: Course, compute: Callable[[], BaseModel]) -> Body:
    """``compute()``'s answer for ``course`` at the revision ``session`` sees, computed
    only when no copy is kept at that revision."""
    key = (database_of(session), course.id)
    revision = grade_revision.current(session)
    if (found := _found(key, revision)) is not None:
        return found
    with _guard:
        lock = _computing.setdefault(key, threading.Lock())
    with lock:
        if (found := _found(key, revision)) is not None:
            return found  # a reader beside this one computed it meanwhile
        body = Body.of(compute())
        with _guard:
            _kept[key] = _Kept(revision, body)
            _kept.move_to_end(key)
            while len(_kept) > MOST_COURSES_KEPT:
                dropped, _ = _kept.popitem(last=False)
                _computing.pop(dropped, None)
        return body


def _found(key: CourseKey, revision: int) -> Body | None:
    with _guard:
        kept = _kept.get(key)
        if kept is None or kept.revision != revision:
            return None
        _kept.move_to_end(key)
        return kept.body
