"""Workers: claim a submission from the database, grade it, record the result.

`EmbeddedWorkers` runs worker threads inside `jaxjudge serve` (the embedded
default) or alone in `jaxjudge worker` (more machines). Each thread loops:
claim with a lease, renew the lease while grading, complete. Grading goes
through one warm pool of sandboxes per device.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from app import catalog, queue, regrades
from app.core.config import settings
from app.core.db import session_scope
from app.models import ProblemVersion
from grader.devices import NoDeviceError, device_for
from grader.grade import Mode, grade
from grader.limits import sandbox_limits
from grader.pool import WarmPool
from grader.problem import Problem
from grader.report import GradeReport
from grader.verdicts import Verdict

log = logging.getLogger("jaxjudge.worker")

GradeFunction = Callable[[Problem, str, Mode, str, int], GradeReport]


class PoolGrader:
    """Grades through warm sandbox pools, one per device, created on first use."""

    def __init__(self) -> None:
        self._pools: dict[str, WarmPool] = {}
        self._lock = threading.Lock()

    def _pool(self, device: str) -> WarmPool:
        from grader.sandbox import SandboxLauncher

        with self._lock:
            if device not in self._pools:
                self._pools[device] = WarmPool(
                    SandboxLauncher(warm_up=True),
                    size=settings.pool_size,
                    memory_mb=settings.pool_memory_mb,
                    device=device,
                )
            return self._pools[device]

    def warm(self, device: str) -> None:
        self._pool(device)

    def __call__(
        self, problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
    ) -> GradeReport:
        return grade(
            problem, code, mode=mode, device=device, runner=self._pool(device), variant=hidden_draw
        )

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()


def _failure(
    slug: str, mode: str, message: str, verdict: Verdict = Verdict.INTERNAL_ERROR
) -> dict[str, Any]:
    return GradeReport(
        problem=slug, mode=mode, verdict=verdict, score=0.0, message=message
    ).to_json()


class EmbeddedWorkers:
    def __init__(
        self, *, threads: int, grader: GradeFunction | None = None, poll_seconds: float = 0.5
    ) -> None:
        self.threads = threads
        self.grader: GradeFunction = grader or PoolGrader()
        self.poll_seconds = poll_seconds
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        if isinstance(self.grader, PoolGrader):
            sandbox_limits()  # says once, at start-up, which limits hold and by what
            self.grader.warm("cpu")  # the first submission should not wait for imports
        prefix = f"{socket.gethostname()}:{os.getpid()}"
        for index in range(self.threads):
            thread = threading.Thread(
                target=self._loop,
                args=(f"{prefix}:{index}",),
                name=f"jaxjudge-worker-{index}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)
        close = getattr(self.grader, "close", None)
        if callable(close):
            close()

    def _loop(self, worker: str) -> None:
        while not self._stop.is_set():
            try:
                if not self.work_once(worker):
                    self._stop.wait(self.poll_seconds)
            except Exception:
                log.exception("worker %s: unexpected error; continuing", worker)
                self._stop.wait(self.poll_seconds)

    def work_once(self, worker: str) -> bool:
        """Grade one waiting submission or, with none waiting, one regrade item."""
        return self._one_submission(worker) or self._one_regrade_item(worker)

    def _one_submission(self, worker: str) -> bool:
        with session_scope() as session:
            claimed = queue.claim(session, worker=worker, lease_seconds=settings.lease_seconds)
            if claimed is None:
                return False
            job = queue.GradingJob(
                claimed.id,
                claimed.problem,
                claimed.problem_version_id,
                claimed.code,
                claimed.mode,
                claimed.attempts,
                claimed.hidden_draw or 0,
            )
        self._grade(worker, job)
        return True

    def _one_regrade_item(self, worker: str) -> bool:
        """Re-run one submission of a regrade against the regrade's version."""
        with session_scope() as session:
            item = queue.claim_regrade_item(
                session, worker=worker, lease_seconds=settings.lease_seconds
            )
            if item is None:
                return False
            job = regrades.job_for(session, item)
        result = self._leased(job.id, worker, queue.renew_regrade_item, lambda: self._result(job))
        with session_scope() as session:
            recorded = queue.complete_regrade_item(
                session,
                item_id=job.id,
                worker=worker,
                verdict=result["verdict"],
                score=float(result["score"]),
                result_json=json.dumps(result, allow_nan=False),
            )
            if recorded:
                regrades.finish_if_complete(session, item_id=job.id)
        return True

    def _leased(
        self,
        row_id: int,
        worker: str,
        renew: Callable[..., bool],
        work: Callable[[], dict[str, Any]],
    ) -> dict[str, Any]:
        renewing = threading.Event()
        keeper = threading.Thread(
            target=self._keep_lease, args=(row_id, worker, renewing, renew), daemon=True
        )
        keeper.start()
        try:
            return work()
        finally:
            renewing.set()
            keeper.join()

    def _grade(self, worker: str, job: queue.GradingJob) -> None:
        submission_id = job.id
        result = self._leased(submission_id, worker, queue.renew, lambda: self._result(job))
        with session_scope() as session:
            recorded = queue.complete(
                session,
                submission_id=submission_id,
                worker=worker,
                verdict=result["verdict"],
                score=float(result["score"]),
                result_json=json.dumps(result, allow_nan=False),
            )
        log.info(
            "submission %s: %s%s",
            submission_id,
            result["verdict"],
            "" if recorded else " (lease lost: dropped)",
        )

    def _result(self, job: queue.GradingJob) -> dict[str, Any]:
        slug, code, mode = job.slug, job.code, job.mode
        if job.attempts > queue.MAX_ATTEMPTS:
            return _failure(
                slug,
                mode,
                "Grading failed repeatedly on this submission; please contact the course staff.",
            )
        problem = _problem(slug, job.version_id)
        if problem is None:
            return _failure(slug, mode, f"The problem {slug!r} is not published.")
        try:
            device = device_for(problem.config.device)
        except NoDeviceError as error:
            return _failure(slug, mode, str(error))
        try:
            return self.grader(
                problem, code, "run" if mode == "run" else "submit", device, job.hidden_draw
            ).to_json()
        except Exception as error:
            log.exception("grading submission failed")
            return _failure(
                slug, mode, f"The grader failed: {type(error).__name__}. Please try again."
            )

    def _keep_lease(
        self, row_id: int, worker: str, done: threading.Event, renew: Callable[..., bool]
    ) -> None:
        while not done.wait(settings.lease_seconds / 3):
            with session_scope() as session:
                if not renew(session, row_id, worker=worker, lease_seconds=settings.lease_seconds):
                    log.warning("%s %s: lease lost", renew.__name__, row_id)
                    return


def _problem(slug: str, version_id: int | None) -> Problem | None:
    """The version a submission names; the live one for submissions made before versioning."""
    with session_scope() as session:
        version = (
            session.get(ProblemVersion, version_id)
            if version_id is not None
            else catalog.live_version(session, slug)
        )
        return None if version is None else catalog.problem_of(version)
