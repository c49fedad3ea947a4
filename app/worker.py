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

from app import queue
from app.core.config import settings
from app.core.db import session_scope
from grader.devices import NoDeviceError, device_for
from grader.grade import Mode, grade
from grader.pool import WarmPool
from grader.problem import Problem, find_problem, load_problem
from grader.report import GradeReport
from grader.verdicts import Verdict

log = logging.getLogger("jaxjudge.worker")

GradeFunction = Callable[[Problem, str, Mode, str], GradeReport]


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

    def __call__(self, problem: Problem, code: str, mode: Mode, device: str) -> GradeReport:
        return grade(problem, code, mode=mode, device=device, runner=self._pool(device))

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
        self._problems: dict[str, Problem] = {}

    def start(self) -> None:
        if isinstance(self.grader, PoolGrader):
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

    def _problem(self, slug: str) -> Problem | None:
        if slug not in self._problems:
            folder = find_problem(slug)
            if folder is None:
                return None
            self._problems[slug] = load_problem(folder)
        return self._problems[slug]

    def _loop(self, worker: str) -> None:
        while not self._stop.is_set():
            try:
                with session_scope() as session:
                    claimed = queue.claim(
                        session, worker=worker, lease_seconds=settings.lease_seconds
                    )
                    job = (
                        (claimed.id, claimed.problem, claimed.code, claimed.mode, claimed.attempts)
                        if claimed
                        else None
                    )
                if job is None:
                    self._stop.wait(self.poll_seconds)
                    continue
                self._grade(worker, *job)
            except Exception:
                log.exception("worker %s: unexpected error; continuing", worker)
                self._stop.wait(self.poll_seconds)

    def _grade(
        self, worker: str, submission_id: int, slug: str, code: str, mode: str, attempts: int
    ) -> None:
        renewing = threading.Event()
        keeper = threading.Thread(
            target=self._keep_lease, args=(submission_id, worker, renewing), daemon=True
        )
        keeper.start()
        try:
            result = self._result(slug, code, mode, attempts)
        finally:
            renewing.set()
            keeper.join()
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

    def _result(self, slug: str, code: str, mode: str, attempts: int) -> dict[str, Any]:
        if attempts > queue.MAX_ATTEMPTS:
            return _failure(
                slug,
                mode,
                "Grading failed repeatedly on this submission; please contact the course staff.",
            )
        problem = self._problem(slug)
        if problem is None:
            return _failure(slug, mode, f"The problem {slug!r} no longer exists.")
        try:
            device = device_for(problem.config.device)
        except NoDeviceError as error:
            return _failure(slug, mode, str(error))
        try:
            return self.grader(
                problem, code, "run" if mode == "run" else "submit", device
            ).to_json()
        except Exception as error:
            log.exception("grading submission failed")
            return _failure(
                slug, mode, f"The grader failed: {type(error).__name__}. Please try again."
            )

    def _keep_lease(self, submission_id: int, worker: str, done: threading.Event) -> None:
        while not done.wait(settings.lease_seconds / 3):
            with session_scope() as session:
                if not queue.renew(
                    session,
                    submission_id=submission_id,
                    worker=worker,
                    lease_seconds=settings.lease_seconds,
                ):
                    log.warning("submission %s: lease lost", submission_id)
                    return
