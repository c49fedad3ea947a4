"""Which submission a log line is about, end to end: the route that stored it, the
worker that grades it, the supervisor and sandbox lines of its grading.

The worker sets ``grading_of(submission_id)`` around a grading; everything logged in
that thread meanwhile (grader/running/supervise.py, grader/running/pool.py, grader/grade.py) carries
``submission=N`` through ``SubmissionFilter``. Web requests log the id in their JSON
line (app/server/http_stack.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[int | None] = ContextVar("jaxjudge_submission", default=None)
FORMAT = "%(asctime)s %(levelname)s %(name)s submission=%(submission)s %(message)s"


@contextmanager
def grading_of(submission_id: int) -> Iterator[None]:
    token = _current.set(submission_id)
    try:
        yield
    finally:
        _current.reset(token)


class SubmissionFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        current = _current.get()
        record.submission = "-" if current is None else current
        return True


def configure(level: int = logging.INFO) -> None:
    """The service's logging: one line per record, each with its submission (or -)."""
    logging.basicConfig(level=level, format=FORMAT, force=True)
    for handler in logging.getLogger().handlers:
        handler.addFilter(SubmissionFilter())
