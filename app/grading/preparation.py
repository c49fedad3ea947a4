"""Trusted runs ahead of learners: expected outputs on disk and each version's
sample views in the database.

At start the server prepares every live version (from the disk cache when it
can) and stores the samples of live and newest versions that have none; then
it looks again every ``INTERVAL_SECONDS`` for versions synced or published
since (by `jaxjudge sync`/`publish` on another process, or the author pages).
A page view only reads what is stored: it never starts JAX.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy.exc import SQLAlchemyError

from app.core.db import session_scope
from app.data import catalog
from app.models import ProblemVersion
from grader import expected
from grader.judging import samples
from grader.problems.problem import Problem

log = logging.getLogger("jaxjudge.prepare")
INTERVAL_SECONDS = 30.0
_one_at_a_time = threading.Lock()


def _prepare(pending: dict[int, Problem]) -> int:
    """Trusted runs of the given versions' problems; store each one's samples."""
    by_problem = {id(problem): version_id for version_id, problem in pending.items()}
    stored = 0
    for problem, result in expected.prepare_all(list(pending.values())):
        outcome = result if isinstance(result, Exception) else samples.sample_views(problem, result)
        if isinstance(result, Exception):
            log.error("preparing %s failed: %s", problem.slug, result)
        with session_scope() as session:
            version = session.get_one(ProblemVersion, by_problem[id(problem)])
            if version.samples_json is None:
                catalog.store_samples(version, outcome)
                stored += 1
    return stored


def prepare_versions(*, include_live: bool) -> int:
    """Prepare versions without stored samples (and, with ``include_live``, every live
    one, so its expected outputs are on this machine's disk). Returns how many
    versions got their samples stored; 0 at once if another call is running."""
    if not _one_at_a_time.acquire(blocking=False):
        return 0
    try:
        with session_scope() as session:
            versions = catalog.versions_without_samples(session)
            if include_live:
                versions += [version for version, _problem in catalog.live_problems(session)]
            pending = {version.id: catalog.problem_of(version) for version in versions}
        return _prepare(pending) if pending else 0
    finally:
        _one_at_a_time.release()


def prepare_version(version_id: int) -> None:
    """One version's trusted outputs and samples now (after an author's check, which
    left its outputs in the cache: this is a file read, not another run)."""
    with session_scope() as session:
        problem = catalog.problem_of(session.get_one(ProblemVersion, version_id))
    _prepare({version_id: problem})


class Preparer:
    """The background thread that keeps versions prepared."""

    def __init__(self, interval: float = INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="jaxjudge-prepare", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                prepare_versions(include_live=first)
                first = False
            except SQLAlchemyError as error:  # the database's troubles are logged elsewhere
                log.warning("preparing versions: database unavailable (%s)", type(error).__name__)
            except Exception:
                log.exception("preparing versions failed; trying again later")
            self._stop.wait(self.interval)
