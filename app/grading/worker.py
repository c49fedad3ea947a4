"""Workers: claim a submission from the database, grade it, record the result; with no
submission or regrade item waiting, run an author's check (app/grading/author_checks.py).

`EmbeddedWorkers` runs worker threads inside `jaxjudge serve` (the embedded
default) or alone in `jaxjudge worker` (more machines). Each thread loops:
claim with a lease, renew the lease while grading, record the result. Grading
goes through one warm pool of sandboxes per device (app/grading/runs.py).

Faults: when the database fails, a thread backs off exponentially (0.5 s to
30 s) and logs one line when it starts failing and one when it recovers, not
a traceback per poll. A finished verdict whose write fails is retried with the
same back-off for as long as the lease is not someone else's: never silently
dropped, never recorded twice. At start, leases held by dead grading processes
on this host are released at once (app/grading/queue.py ``release_dead``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from app.core.config import settings
from app.core.db import session_scope
from app.data import regrades
from app.grading import author_checks, heartbeats, queue
from app.grading.doorbell import changes, new_work
from app.grading.held_runs import HeldRunWatch
from app.grading.notifications import Listener
from app.grading.runs import Grader, PoolGrader, outcome_for
from app.models import Regrade, RegradeItem, Submission
from grader.child.verdicts import Mode
from grader.grade import GradingOutcome
from grader.judging.judge import NO_HOOKS, GradingHooks
from grader.judging.report import CaseReport
from grader.parking import Ticket
from grader.running.cgroups import process_tag
from grader.running.log_context import grading_of

log = logging.getLogger("jaxjudge.worker")

FIRST_BACKOFF, MAX_BACKOFF = 0.5, 30.0
RETRY_PAUSE_SECONDS = 2.0
RECORD_FOR_SECONDS = 600.0  # how long a finished verdict keeps trying to be recorded
T = TypeVar("T")


def _alive(tag: str) -> bool:
    pid = tag.split("-", 1)[0]
    return pid.isdigit() and process_tag(int(pid)) == tag


class EmbeddedWorkers:
    def __init__(
        self, *, threads: int, grader: Grader | None = None, poll_seconds: float = 0.5
    ) -> None:
        self.threads = threads
        self.grader: Grader = grader or PoolGrader()
        self.poll_seconds = poll_seconds
        self.name = heartbeats.process_name()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._jobs: dict[str, int] = {}  # worker thread -> submission in hand
        self._failing = False
        self._state_lock = threading.Lock()
        self.heartbeat = heartbeats.Heartbeat(device="cpu", snapshot=self._snapshot)
        self.listener = Listener()
        parking = self.grader.parking
        self.held_runs = None if parking is None else HeldRunWatch(parking, self.name)

    def _snapshot(self) -> heartbeats.Snapshot:
        ready, size = self.grader.stats()
        with self._state_lock:
            jobs = sorted(self._jobs.values())
        return heartbeats.Snapshot(self.threads, ready, size, ready > 0 or size == 0, jobs)

    def start(self) -> None:
        self.grader.start()
        self._release_dead_leases()
        self.heartbeat.start()
        self.listener.start()  # PostgreSQL: NOTIFY from any web process wakes us
        if self.held_runs is not None:
            self.held_runs.start()
        for index in range(self.threads):
            thread = threading.Thread(
                target=self._loop,
                args=(f"{self.name}:{index}",),
                name=f"jaxjudge-worker-{index}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)

    def _release_dead_leases(self) -> None:
        try:
            with session_scope() as session:
                released = queue.release_dead(session, host=heartbeats.host(), alive=_alive)
        except SQLAlchemyError as error:
            log.warning("could not release dead workers' leases: %s", type(error).__name__)
            return
        if released:
            log.info("released %d submission(s) held by dead grading processes", released)

    def stop(self) -> None:
        self._stop.set()
        self.listener.stop()
        if self.held_runs is not None:
            self.held_runs.stop()
        new_work.ring()  # idle workers see the stop at once
        for thread in self._threads:
            thread.join(timeout=120)
        self.heartbeat.stop()
        self.grader.close()

    def _database(self, ok: bool, error: BaseException | None = None) -> None:
        """Log the database's state changes, once each."""
        with self._state_lock:
            changed, self._failing = self._failing == ok, not ok
        if changed and ok:
            log.info("workers: the database answers again")
        elif changed:
            log.warning("workers: the database fails (%s); backing off", type(error).__name__)

    def _loop(self, worker: str) -> None:
        backoff = FIRST_BACKOFF
        while not self._stop.is_set():
            try:
                seen = new_work.rings()
                busy = self.work_once(worker)
                self._database(ok=True)
                backoff = FIRST_BACKOFF
                if not busy:  # until a submission is stored here, or the next poll
                    new_work.wait(seen, self.poll_seconds)
            except SQLAlchemyError as error:
                self._database(ok=False, error=error)
                self._stop.wait(backoff)
                backoff = min(MAX_BACKOFF, backoff * 2)
            except Exception:
                log.exception("worker %s: unexpected error; continuing", worker)
                self._stop.wait(self.poll_seconds)

    def work_once(self, worker: str) -> bool:
        """Grade one waiting submission or, with none waiting, one regrade item or, with
        neither, run one author's check."""
        return (
            self._one_submission(worker)
            or self._one_regrade_item(worker)
            or self._one_check(worker)
        )

    def _one_check(self, worker: str) -> bool:
        """Run one queued check of a version (or one whose worker's lease expired)."""
        if not author_checks.one_at_a_time.acquire(blocking=False):
            return False  # this process runs one already
        try:
            with session_scope() as session:
                version_id = author_checks.claim_check(
                    session, worker=worker, lease_seconds=settings.lease_seconds
                )
            if version_id is None:
                return False
            recorded = self._leased(
                version_id,
                worker,
                author_checks.renew_check,
                lambda: author_checks.run_check(
                    version_id, worker=worker, lease_seconds=settings.lease_seconds
                ),
            )
            log.info(
                "check of version %s: %s",
                version_id,
                "recorded" if recorded else "lease taken by another worker: dropped",
            )
            return True
        finally:
            author_checks.one_at_a_time.release()

    def _one_submission(self, worker: str) -> bool:
        with session_scope() as session:
            claimed = queue.claim(
                session,
                worker=worker,
                lease_seconds=settings.lease_seconds,
                first_of=self._held_learners(),
            )
            if claimed is None:
                return False
            job = queue.job_of(claimed)
        changes.changed(job.id)  # running now
        with self._state_lock:
            self._jobs[worker] = job.id
        with grading_of(job.id):  # every line until it is recorded carries its id
            try:
                graded = self._leased(
                    job.id, worker, queue.renew, lambda: self._graded(job, worker)
                )
                report = graded.report
                if self._put_back_for_later(graded, job, Submission, worker):
                    return True
                recorded = self._record(
                    lambda session: queue.complete(
                        session,
                        submission_id=job.id,
                        worker=worker,
                        verdict=report.verdict.value,
                        score=report.score,
                        result_json=json.dumps(report.to_json(), allow_nan=False),
                        hidden_draw=graded.draw_to_record,
                    ),
                    Submission,
                    job.id,
                    worker,
                )
            finally:
                with self._state_lock:
                    self._jobs.pop(worker, None)
            changes.changed(job.id)  # its verdict: the stream answers now, not at its next look
            log.info(
                "submission %s: %s%s",
                job.id,
                report.verdict.value,
                "" if recorded else " (lease taken by another worker: dropped)",
            )
        return True

    def _held_learners(self) -> dict[int, Ticket]:
        """Learners whose passing run this process holds, and for which code."""
        parking = self.grader.parking
        if parking is None:
            return {}
        return {int(owner): ticket for owner, (ticket, _since) in parking.held().items()}

    def _graded(self, job: queue.GradingJob, worker: str) -> GradingOutcome:
        """The job's grading; its samples' reports are stored as soon as they are known,
        so the learner reads them while the hidden cases run."""

        def seen(reports: list[CaseReport]) -> None:
            stored = json.dumps([r.model_dump(mode="json") for r in reports], allow_nan=False)
            # Its own thread: the grading thread reads the child's frames meanwhile.
            threading.Thread(
                target=self._store_samples, args=(job.id, worker, stored), daemon=True
            ).start()

        # A run's samples are its whole report (a run held for the submission after it
        # says SAMPLES_DONE too, grader/parking.py): nothing to show ahead of it.
        hooks = GradingHooks(samples_seen=seen) if job.mode is Mode.SUBMIT else NO_HOOKS
        return outcome_for(job, self.grader, hooks)

    def _store_samples(self, submission_id: int, worker: str, stored: str) -> None:
        try:
            with session_scope() as session:
                queue.samples_seen(
                    session, submission_id=submission_id, worker=worker, samples_json=stored
                )
            changes.changed(submission_id)
        except SQLAlchemyError as error:  # the verdict still comes; only the preview is lost
            self._database(ok=False, error=error)

    def _one_regrade_item(self, worker: str) -> bool:
        """Re-run one submission of a regrade against the regrade's version."""
        with session_scope() as session:
            item = queue.claim_regrade_item(
                session, worker=worker, lease_seconds=settings.lease_seconds
            )
            if item is None:
                return False
            regrade = session.get_one(Regrade, item.regrade_id)
            submission = session.get_one(Submission, item.submission_id)
            job = queue.job_of(submission, (item, regrade))
        graded = self._leased(
            job.id, worker, queue.renew_regrade_item, lambda: outcome_for(job, self.grader)
        )
        report = graded.report
        if self._put_back_for_later(graded, job, RegradeItem, worker):
            return True

        def record(session: Any) -> bool:
            done = queue.complete_regrade_item(
                session,
                item_id=job.id,
                worker=worker,
                verdict=report.verdict.value,
                score=report.score,
                result_json=json.dumps(report.to_json(), allow_nan=False),
            )
            if done:
                regrades.finish_if_complete(session=session, item_id=job.id)
            return done

        self._record(record, RegradeItem, job.id, worker)
        return True

    def _put_back_for_later(
        self,
        graded: GradingOutcome,
        job: queue.GradingJob,
        model: type[Submission] | type[RegradeItem],
        worker: str,
    ) -> bool:
        """A grading that failed through the grader's fault (its runtime did not start, on
        a GPU typically because another sandbox held the memory) goes back to the queue
        for a later attempt, by any worker, instead of becoming the learner's
        ``internal_error``; after ``MAX_ATTEMPTS`` the error is recorded."""
        if not graded.retry_later or job.attempts >= queue.MAX_ATTEMPTS:
            return False
        with session_scope() as session:
            returned = queue.put_back(session, model, job.id, worker=worker)
        log.warning(
            "%s %s: %s; %s",
            model.__tablename__,
            job.id,
            graded.report.message,
            "back in the queue for a later attempt" if returned else "lease already lost",
        )
        self._stop.wait(RETRY_PAUSE_SECONDS)  # let whatever held the device let go
        return True

    def _record(
        self,
        write: Callable[[Any], bool],
        model: type[Submission] | type[RegradeItem],
        row_id: int,
        worker: str,
    ) -> bool:
        """Write a finished result, retrying through database failures while the row is
        still ours; False when another worker holds it now (the result is not ours to
        record)."""
        backoff, deadline = FIRST_BACKOFF, time.monotonic() + RECORD_FOR_SECONDS
        while True:
            try:
                with session_scope() as session:
                    done = write(session)
                self._database(ok=True)
                return done
            except SQLAlchemyError as error:
                self._database(ok=False, error=error)
                if time.monotonic() > deadline:
                    log.error(
                        "%s %s: could not record its result for %.0f s; it will be graded again",
                        model.__tablename__,
                        row_id,
                        RECORD_FOR_SECONDS,
                    )
                    return False
                time.sleep(backoff)
                backoff = min(MAX_BACKOFF, backoff * 2)

    def _leased(
        self,
        row_id: int,
        worker: str,
        renew: Callable[..., bool],
        work: Callable[[], T],
    ) -> T:
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

    def _keep_lease(
        self, row_id: int, worker: str, done: threading.Event, renew: Callable[..., bool]
    ) -> None:
        while not done.wait(settings.lease_seconds / 3):
            try:
                with session_scope() as session:
                    if not renew(
                        session, row_id, worker=worker, lease_seconds=settings.lease_seconds
                    ):
                        log.warning("%s %s: lease lost", renew.__name__, row_id)
                        return
            except SQLAlchemyError as error:
                self._database(ok=False, error=error)  # keep trying: the lease may survive
