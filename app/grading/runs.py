"""Grading one claimed job: the version it names, the device, the warm pools, and a
report (as JSON) whatever happens, so a worker always has a result to record."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from app.core.config import grader_settings
from app.core.db import session_scope
from app.data import catalog
from app.grading import preparation, queue
from app.models import ProblemVersion
from grader import calibration, expected
from grader.child.verdicts import Mode, Verdict
from grader.grade import grade, measure_reference
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from grader.running.devices import NoDeviceError, device_for
from grader.running.gpu_sharing import GpuBusyError
from grader.running.pool import WarmPool

log = logging.getLogger("jaxjudge.worker")

GradeFunction = Callable[[Problem, str, Mode, str, int], GradeReport]


class PoolGrader:
    """Grades through warm sandbox pools, one per device, created on first use."""

    def __init__(self) -> None:
        self._pools: dict[str, WarmPool] = {}
        self._lock = threading.Lock()

    def _pool(self, device: str) -> WarmPool:
        from grader.running.sandbox import SandboxLauncher

        with self._lock:
            if device not in self._pools:
                self._pools[device] = WarmPool(
                    SandboxLauncher(warm_up=True),
                    size=grader_settings.pool_size,
                    memory_mb=grader_settings.pool_memory_mb,
                    device=device,
                )
            return self._pools[device]

    def warm(self, device: str) -> None:
        self._pool(device)

    def stats(self) -> tuple[int, int]:
        """(children ready now, children the pools keep) over every device."""
        with self._lock:
            pools = list(self._pools.values())
        ready = sum(pool.stats()[0] for pool in pools)
        return ready, sum(pool.size for pool in pools)

    def __call__(
        self, problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
    ) -> GradeReport:
        pool = self._pool(device)
        # The reference's outputs alone while a first start has not run the mistakes yet.
        trusted = expected.for_grading(
            problem, device, reference_first=preparation.PROGRESS.snapshot().running
        )
        # This machine's limits for the problem: measured once, by grading its reference
        # through the same pool, before the first submission that needs them.
        limits = calibration.ensure(
            problem, device, lambda p, d: measure_reference(p, d, runner=pool, trusted=trusted)
        )
        return grade(
            problem,
            code,
            mode=mode,
            device=device,
            runner=pool,
            trusted=trusted,
            variant=hidden_draw,
            limits=limits,
            whole=lambda: expected.load_or_compute(problem, device),
        )

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()


def failure(slug: str, mode: str, message: str) -> GradeReport:
    """The grader's own failure, reported as such (never blamed on the learner)."""
    return GradeReport(
        problem=slug, mode=Mode(mode), verdict=Verdict.INTERNAL_ERROR, score=0.0, message=message
    )


def _problem(slug: str, version_id: int | None) -> Problem | None:
    """The version a submission names; the live one for submissions made before versioning."""
    with session_scope() as session:
        version = (
            session.get(ProblemVersion, version_id)
            if version_id is not None
            else catalog.live_version(session, slug)
        )
        return None if version is None else catalog.problem_of(version)


def report_for(job: queue.GradingJob, grader: GradeFunction) -> GradeReport:
    """The report for ``job``: a verdict in every case, never an exception."""
    slug, code, mode = job.slug, job.code, job.mode
    if job.attempts > queue.MAX_ATTEMPTS:
        return failure(
            slug,
            mode,
            "Grading failed repeatedly on this submission; please contact the course staff.",
        )
    problem = _problem(slug, job.version_id)
    if problem is None:
        return failure(slug, mode, f"The problem {slug!r} is not published.")
    try:
        device = device_for(problem.config.device)
    except NoDeviceError as error:
        return failure(slug, mode, str(error))
    try:
        return grader(problem, code, Mode(mode), device, job.hidden_draw)
    except GpuBusyError as error:
        log.warning("submission %s: %s", job.id, error)
        busy = failure(slug, mode, "Every GPU sandbox stayed busy; please try again.")
        busy.retry_later = True  # back to the queue (app/grading/worker.py)
        return busy
    except Exception as error:
        log.exception("grading submission %s failed", job.id)
        return failure(slug, mode, f"The grader failed: {type(error).__name__}. Please try again.")
