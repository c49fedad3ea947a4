"""Grading one claimed job: the version it names, the device, the warm pools, and a
report (as JSON) whatever happens, so a worker always has a result to record.

A worker grades through ``Grader``, the one thing it knows of a grader: ``PoolGrader``
(warm sandbox pools and held runs) in service, ``FunctionGrader`` (one function, no
pools) in tests. What a grading tells the worker while it runs goes down as
``GradingHooks``; what the worker decides with its result comes back beside the report,
in a ``GradingOutcome`` (both grader-side: grader/judging/judge.py, grader/grade.py)."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from sqlalchemy.exc import IntegrityError

from app.core.config import grader_settings
from app.core.db import session_scope
from app.data import catalog, check_products
from app.grading import preparation, queue
from app.models import ProblemVersion
from grader import calibration, expected
from grader.child.verdicts import Mode, Verdict
from grader.errors import CheckResultsMissingError
from grader.grade import GradingOutcome, grade_outcome, measure_reference, run_and_hold
from grader.judging.judge import NO_HOOKS, GradingHooks
from grader.judging.report import GradeReport
from grader.judging.trusted import TrustedOutputs
from grader.parking import ParkingLot, Ticket
from grader.problems.problem import Problem
from grader.running.devices import NoDeviceError, device_for
from grader.running.gpu_sharing import GpuBusyError
from grader.running.limits import refuse_unbounded_gpu_host, sandbox_limits
from grader.running.pool import WarmPool
from grader.running.supervise import CONFIRMATION_WALL_FACTOR
from grader.running.timing import TimeLimits

log = logging.getLogger("jaxjudge.worker")


class Grader(Protocol):
    """What a worker needs of whatever grades its jobs (app/grading/worker.py)."""

    @property
    def parking(self) -> ParkingLot | None:
        """The runs this grader holds for their learners' submissions (grader/parking.py);
        None: it holds none."""
        ...

    def start(self) -> None:
        """Get ready to grade; called once, before the first job."""
        ...

    def stats(self) -> tuple[int, int]:
        """(sandboxes ready now, sandboxes kept) for the heartbeat; (0, 0) without pools."""
        ...

    def grade(
        self, problem: Problem, job: queue.GradingJob, device: str, hooks: GradingHooks
    ) -> GradingOutcome:
        """``job`` graded on ``problem`` (the version it names) on ``device``; it may raise
        (``outcome_for`` makes a report of that)."""
        ...

    def close(self) -> None:
        """Let go of every child and pool it holds."""
        ...


# A grading as one function: (problem, code, mode, device, hidden draw) -> report.
GradeFunction = Callable[[Problem, str, Mode, str, int], GradeReport]


class FunctionGrader:
    """A grader that is one function: no pools to start or count, no held runs, and no
    hook called (nothing is shown ahead of its report); its reports are never retried."""

    parking: ParkingLot | None = None

    def __init__(self, function: GradeFunction) -> None:
        self.function = function

    def start(self) -> None:
        pass

    def stats(self) -> tuple[int, int]:
        return 0, 0

    def grade(
        self, problem: Problem, job: queue.GradingJob, device: str, hooks: GradingHooks
    ) -> GradingOutcome:
        return GradingOutcome(self.function(problem, job.code, job.mode, device, job.hidden_draw))

    def close(self) -> None:
        pass


class PoolGrader:
    """Grades through warm sandbox pools, one per device, created on first use; a
    learner's passing run goes on for their next submission of the same code
    (grader/parking.py)."""

    def __init__(self) -> None:
        self._pools: dict[str, WarmPool] = {}
        self._lock = threading.Lock()
        self.parking = ParkingLot(
            seconds=grader_settings.park_seconds,
            limit=grader_settings.park_children,
            min_available_mb=grader_settings.park_min_available_mb,
        )

    def _pool(self, device: str) -> WarmPool:
        from grader.running.sandbox import SandboxLauncher

        with self._lock:
            if device not in self._pools:
                self._pools[device] = WarmPool(
                    SandboxLauncher(warm_up=True),
                    size=grader_settings.pool_size,
                    memory_mb=grader_settings.pool_memory_mb,
                    device=device,
                    min_available_mb=grader_settings.pool_min_available_mb,
                )
            return self._pools[device]

    def warm(self, device: str) -> None:
        self._pool(device)

    def start(self) -> None:
        sandbox_limits()  # says once, at start-up, which limits hold and by what
        refuse_unbounded_gpu_host()
        self.warm("cpu")  # the first submission should not wait for imports

    def stats(self) -> tuple[int, int]:
        """(children ready now, children the pools keep) over every device."""
        with self._lock:
            pools = list(self._pools.values())
        ready = sum(pool.stats()[0] for pool in pools)
        return ready, sum(pool.size for pool in pools)

    def _prepared(self, problem: Problem, device: str) -> tuple[TrustedOutputs, TimeLimits]:
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
        return trusted, limits

    def grade(
        self, problem: Problem, job: queue.GradingJob, device: str, hooks: GradingHooks
    ) -> GradingOutcome:
        continued = self._learners(problem, job, device, hooks)
        if continued is not None:
            return continued
        return self._graded(problem, job.code, job.mode, device, job.hidden_draw, hooks)

    def _learners(
        self, problem: Problem, job: queue.GradingJob, device: str, hooks: GradingHooks
    ) -> GradingOutcome | None:
        """A learner's run or submit through the parking lot: a run that passes every
        sample is held for the same code's submission, a submission of that code is
        graded in its child, on the run's draw. None: the ordinary way (a regrade, parking
        off, no held run)."""
        if job.learner is None or job.version_id is None or not self.parking.enabled:
            return None
        if device != "cpu":  # a GPU child waiting for a submission would hold a card's slot
            return None
        ticket = Ticket(
            owner=str(job.learner),
            version=str(job.version_id),
            device=device,
            code_sha256=Ticket.digest(job.code),
        )
        if job.mode is Mode.SUBMIT:
            parked = self.parking.take(ticket)
            if parked is None:
                return None
            started = time.monotonic()
            graded = parked.verdict(parked.held.job.wall_seconds * CONFIRMATION_WALL_FACTOR + 30)
            if graded is None:  # afresh, on the draw the run's child had
                variant = parked.held.variant
                graded = self._graded(problem, job.code, Mode.SUBMIT, device, variant, hooks)
                graded.report.run_draw = True  # for staff: how it was graded
                graded = replace(graded, draw_to_record=variant)
            graded.report.seconds = round(time.monotonic() - started, 3)
            return graded
        self.parking.forget(ticket.owner)
        trusted, limits = self._prepared(problem, device)
        graded, held = run_and_hold(
            problem,
            job.code,
            device=device,
            runner=self._pool(device),
            trusted=trusted,
            limits=limits,
            variant=secrets.randbelow(problem.config.variants),
            whole=lambda: expected.load_or_compute(problem, device),
        )
        if held is not None:
            self.parking.park(ticket, held, since=job.id)
        return graded

    def _graded(
        self,
        problem: Problem,
        code: str,
        mode: Mode,
        device: str,
        hidden_draw: int,
        hooks: GradingHooks,
    ) -> GradingOutcome:
        pool = self._pool(device)
        trusted, limits = self._prepared(problem, device)
        return grade_outcome(
            problem,
            code,
            mode=mode,
            device=device,
            runner=pool,
            trusted=trusted,
            variant=hidden_draw,
            limits=limits,
            whole=lambda: expected.load_or_compute(problem, device),
            hooks=hooks,
        )

    def close(self) -> None:
        self.parking.close()
        for pool in self._pools.values():
            pool.close()


def failure(slug: str, mode: Mode, message: str) -> GradeReport:
    """The grader's own failure, reported as such (never blamed on the learner)."""
    return GradeReport(
        problem=slug, mode=mode, verdict=Verdict.INTERNAL_ERROR, score=0.0, message=message
    )


def _problem(slug: str, version_id: int | None) -> tuple[int, Problem] | None:
    """The version a submission names (the live one for submissions made before
    versioning): its id and its problem."""
    with session_scope() as session:
        version = (
            session.get(ProblemVersion, version_id)
            if version_id is not None
            else catalog.live_version(session=session, slug=slug)
        )
        return None if version is None else (version.id, catalog.problem_of(version))


def _outputs_on(version_id: int, problem: Problem, device: str) -> None:
    """A course problem checked on another device or runtime than this worker's: its
    expected outputs here derived from its stored check results, or refused
    (check_products.derive; ``DerivationRefusedError``), in a transaction of its own."""
    if problem.trusted:
        return
    try:
        with session_scope() as session:
            check_products.derive(
                session=session, version_id=version_id, problem=problem, device=device
            )
    except IntegrityError:  # another worker of this runtime stored the same first
        log.info("version %s: its outputs on %s were stored by another worker", version_id, device)


def outcome_for(
    job: queue.GradingJob, grader: Grader, hooks: GradingHooks = NO_HOOKS
) -> GradingOutcome:
    """The grading of ``job``: a report with a verdict in every case, never an exception."""
    slug, mode = job.slug, job.mode
    if job.attempts > queue.MAX_ATTEMPTS:
        return GradingOutcome(
            failure(
                slug,
                mode,
                "Grading failed repeatedly on this submission; please contact the course staff.",
            )
        )
    found = _problem(slug, job.version_id)
    if found is None:
        return GradingOutcome(failure(slug, mode, f"The problem {slug!r} is not published."))
    version_id, problem = found
    try:
        device = device_for(problem.config.device)
    except NoDeviceError as error:
        return GradingOutcome(failure(slug, mode, str(error)))
    try:
        _outputs_on(version_id, problem, device)
        return grader.grade(problem, job, device, hooks)
    except GpuBusyError as error:
        log.warning("submission %s: %s", job.id, error)
        busy = failure(slug, mode, "Every GPU sandbox stayed busy; please try again.")
        return GradingOutcome(busy, retry_later=True)  # back to the queue (app/grading/worker.py)
    except CheckResultsMissingError as error:  # no author code runs outside a check
        return GradingOutcome(failure(slug, mode, str(error)))
    except Exception as error:
        log.exception("grading submission %s failed", job.id)
        return GradingOutcome(
            failure(slug, mode, f"The grader failed: {type(error).__name__}. Please try again.")
        )
