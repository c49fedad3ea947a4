"""Trusted runs ahead of learners: expected outputs on disk and each version's
sample views in the database.

At start the server prepares every live version (from the disk cache when it
can) and stores the samples of live and newest versions that have none; then
it looks again every ``INTERVAL_SECONDS`` for versions synced or published
since (by `jaxjudge sync`/`publish` on another process, or the author pages).
A page view only reads what is stored: it never starts JAX.

The server serves while this runs. The order is what learners need first: every
problem's reference before any mistake (a problem can be graded once its
reference's outputs exist; naming a known mistake waits for the second pass),
and within each pass the first problems of every track before the second ones.
``PROGRESS`` says how far it is, for the operators' page and the log.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

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


@dataclass
class Progress:
    """How far the trusted runs of the current round are (one round at a time)."""

    total: int = 0
    gradable: list[str] = field(default_factory=list)  # references ready, in order
    diagnosable: list[str] = field(default_factory=list)  # mistakes ready too
    failed: dict[str, str] = field(default_factory=dict)
    started: float | None = None  # time.monotonic()
    references_seconds: float | None = None  # from the start until every reference
    finished_seconds: float | None = None

    @property
    def running(self) -> bool:
        return self.started is not None and self.finished_seconds is None


class _ProgressBoard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = Progress()

    def snapshot(self) -> Progress:
        with self._lock:
            now = self._now
            return Progress(
                now.total,
                list(now.gradable),
                list(now.diagnosable),
                dict(now.failed),
                now.started,
                now.references_seconds,
                now.finished_seconds,
            )

    def begin(self, total: int) -> None:
        with self._lock:
            self._now = Progress(total=total, started=time.monotonic())

    def record(self, slug: str, result: object, *, mistakes: bool, quiet: bool = False) -> None:
        """One problem's pass done (``result``: its outputs, or why not); ``quiet``: it was
        on disk already, not worth a log line."""
        with self._lock:
            now = self._now
            if isinstance(result, Exception):
                now.failed[slug] = str(result) or type(result).__name__
            else:
                (now.diagnosable if mistakes else now.gradable).append(slug)
            done = len(now.diagnosable if mistakes else now.gradable) + len(now.failed)
            what = "mistakes" if mistakes else "reference"
            if not quiet:
                log.info("trusted runs: %s of %s ready (%d of %d)", what, slug, done, now.total)

    def end_pass(self, *, mistakes: bool) -> None:
        with self._lock:
            elapsed = time.monotonic() - (self._now.started or time.monotonic())
            if mistakes:
                self._now.finished_seconds = elapsed
            else:
                self._now.references_seconds = elapsed
        log.info(
            "trusted runs: every %s ready, %.0f s after the start",
            "known mistake" if mistakes else "reference (every problem gradable)",
            elapsed,
        )


PROGRESS = _ProgressBoard()


def priority(problem: Problem) -> tuple[int, str, str]:
    """The first problems of every track first, then the second ones, and so on."""
    return (problem.config.position, problem.config.track, problem.slug)


def _prepare(
    pending: dict[int, Problem],
    progress: _ProgressBoard,
    with_samples: frozenset[int] = frozenset(),
) -> int:
    """Trusted runs of the given versions' problems, references first; store each one's
    samples as soon as its reference is ready. A version in ``with_samples`` whose
    outputs are on disk needs nothing: its file is not even read (a restart is cheap)."""
    by_problem = {id(problem): version_id for version_id, problem in pending.items()}
    ordered = sorted(pending.values(), key=priority)
    progress.begin(len(ordered))
    done = {
        id(problem)
        for version_id, problem in pending.items()
        if version_id in with_samples and expected.on_disk(problem)
    }
    for problem in ordered:
        if id(problem) in done:
            progress.record(problem.slug, None, mistakes=False, quiet=True)
    stored = 0
    todo = [problem for problem in ordered if id(problem) not in done]
    for problem, result in expected.prepare_all(todo, mistakes=False):
        progress.record(problem.slug, result, mistakes=False)
        outcome = result if isinstance(result, Exception) else samples.sample_views(problem, result)
        if isinstance(result, Exception):
            log.error("preparing %s failed: %s", problem.slug, result)
        with session_scope() as session:
            version = session.get_one(ProblemVersion, by_problem[id(problem)])
            if version.samples_json is None:
                catalog.store_samples(version, outcome)
                stored += 1
    progress.end_pass(mistakes=False)
    failed = set(progress.snapshot().failed)
    for problem in ordered:
        if id(problem) in done or (problem.slug not in failed and expected.on_disk(problem)):
            progress.record(problem.slug, None, mistakes=True, quiet=True)
    # No learner waits on a mistake's outputs: the slowest first, for the shortest pass.
    for problem, result in expected.prepare_all(
        expected.longest_first(
            [
                problem
                for problem in ordered
                if problem.slug not in failed and not expected.on_disk(problem)
            ]
        )
    ):
        progress.record(problem.slug, result, mistakes=True)
        if isinstance(result, Exception):
            log.error("preparing the mistakes of %s failed: %s", problem.slug, result)
    progress.end_pass(mistakes=True)
    return stored


def prepare_versions(*, include_live: bool) -> int:
    """Prepare versions without stored samples (and, with ``include_live``, every live
    one, so its expected outputs are on this machine's disk). Returns how many
    versions got their samples stored; 0 at once if another call is running."""
    if not _one_at_a_time.acquire(blocking=False):
        return 0
    try:
        with session_scope() as session:
            versions = catalog.versions_without_samples(session=session)
            if include_live:
                versions += [
                    version
                    for version, _problem in catalog.live_problems(
                        session=session, every_course=True
                    )
                ]
            pending = {version.id: catalog.problem_of(version) for version in versions}
            with_samples = catalog.with_stored_samples(session=session, version_ids=list(pending))
        return _prepare(pending, PROGRESS, with_samples) if pending else 0
    finally:
        _one_at_a_time.release()


def prepare_version(version_id: int) -> None:
    """One version's trusted outputs and samples now (after an author's check, which
    left its outputs in the cache: this is a file read, not another run)."""
    with session_scope() as session:
        problem = catalog.problem_of(session.get_one(ProblemVersion, version_id))
    _prepare({version_id: problem}, _ProgressBoard())


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
