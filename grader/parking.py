"""Run, then Submit: a passing run's child goes on into a secret draw's hidden cases,
for its learner's next submission of the same code.

A learner runs the samples until they pass, then submits the same code. Instead of
starting that submission from nothing (a fresh child loading the code and compiling
the samples' programs again), a run that passes every sample keeps its child
(grader/grade.py ``run_and_hold``): once the run's report is made and what the child
printed is sealed, the child receives the hidden cases of a draw chosen for this
learner's next submission and compiles and runs them at the lowest CPU share, its
outcome held here, unseen. If that learner's next submission is the same code for the
same problem version on the same device, its verdict is that outcome (the draw is
recorded with it, so a regrade reproduces it); if the child is still working, the
submission raises it to a full share and waits. Where the outcome cannot be used once
the submission has taken it (it timed out while working ahead, it was stopped), the
submission is graded afresh on the same draw: what the code did with those inputs
shows in that verdict, as it would in an ordinary submission, and in nothing else. Anything else discards it: another
submission of the learner (other code, another problem), a new run, the time limit
(``park_seconds``), memory running short on the machine, a restart. A run is not held
while as many children as the bound allows already work ahead.

What it never changes: one learner per sandbox, and a sandbox per submission; no
compiled program leaves the child; what the child prints after the samples is staff's
only (``hidden_output``); the verdict's feedback is a submission's. Its hidden phase is
the one an ordinary submission of that code would have had, limits included (CPU
time counted from the run's delivery). An outcome the machine may have spoilt (a
time-out, a child stopped from outside) is discarded, and the submission is graded the
ordinary way.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from grader.grade import HeldRun
from grader.judging.report import GradeReport
from grader.running.supervise import CONFIRMATION_WALL_FACTOR

log = logging.getLogger("jaxjudge.parking")
WATCH_SECONDS = 1.0
MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True)
class Ticket:
    """What a submission must share with a run to be graded in its child: the same
    learner, problem version, device and code (its hash)."""

    owner: str
    version: str
    device: str
    code_sha256: str


def available_memory_mb(meminfo: Path = MEMINFO) -> int | None:
    """The machine's available memory (``MemAvailable``), or None where unknown."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class ParkedRun:
    """One held run: its child working ahead in a thread of its own, then its outcome."""

    def __init__(self, ticket: Ticket, held: HeldRun, seconds: float) -> None:
        self.ticket, self.held = ticket, held
        self.parked_at = time.monotonic()
        self.expires_at = self.parked_at + seconds
        self.finished = False  # its hidden phase ran to the end, its outcome usable
        self.discarded: str | None = None  # why its outcome will not be used
        self.done = threading.Event()
        self._thread = threading.Thread(
            target=self._work_ahead, name="jaxjudge-parked", daemon=True
        )

    @property
    def working(self) -> bool:
        return not self.done.is_set()

    def start(self) -> None:
        self.held.child.prioritise(busy=False)
        self._thread.start()

    def _work_ahead(self) -> None:
        held = self.held
        try:
            # At the lowest share it may wait long for the CPU: its wall clock is the
            # patient one of a time-out's confirmation; CPU time is what limits it.
            outcome = held.child.resume(
                held.job, wall_seconds=held.job.wall_seconds * CONFIRMATION_WALL_FACTOR
            )
            reason = self.discarded or _spoilt(outcome.timed_out, outcome.killed_from_outside)
            if outcome.startup_error:
                reason = reason or "its runtime failed"
            if reason is None:
                self.finished = True
            else:
                self.discarded = reason
        except Exception:
            log.exception("a parked run failed; its submission will be graded afresh")
            self.discarded = "it failed"
        finally:
            held.child.close()
            self.done.set()

    def discard(self, reason: str) -> None:
        """Stop it (if still working); its outcome will not be used."""
        if self.discarded is None and not self.finished:
            self.discarded = reason
        if self.working:
            self.held.child.kill()

    def verdict(self, timeout: float) -> GradeReport | None:
        """The submission's report: at once if the child has finished, else after
        raising it to a full CPU share and waiting (None: discarded, or not in time)."""
        if self.working:
            self.held.child.prioritise(busy=True)
        if not self.done.wait(timeout):
            self.discard("it did not finish in time")
            return None
        if not self.finished:
            return None
        report = self.held.submit_report()
        report.continued_from_run = report.run_draw = True
        return report


def _spoilt(timed_out: bool, killed_from_outside: bool) -> str | None:
    """Why an outcome may say more about the machine than the submission: a time-out
    while it worked ahead at the lowest share, or a stop from outside. The ordinary
    path decides those (it confirms a time-out on a quiet child)."""
    if timed_out:
        return "it ran out of time while working ahead"
    if killed_from_outside:
        return "it was stopped from outside"
    return None


class ParkingLot:
    """Held runs by learner, one each, in one grading process (its workers share it)."""

    def __init__(
        self, *, seconds: float, working_limit: int, min_available_mb: int, held_limit: int = 1000
    ) -> None:
        self.seconds = seconds
        self.working_limit = working_limit
        self.min_available_mb = min_available_mb
        self.held_limit = held_limit
        self._runs: dict[str, ParkedRun] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._watcher = threading.Thread(
            target=self._watch, name="jaxjudge-parking-watch", daemon=True
        )
        self._watcher.start()

    @property
    def enabled(self) -> bool:
        return self.seconds > 0 and self.working_limit > 0

    def park(self, ticket: Ticket, held: HeldRun) -> None:
        """Keep ``held`` for its learner's next submission, in place of any other."""
        run = ParkedRun(ticket, held, self.seconds)
        earlier: ParkedRun | None = None
        evicted: list[ParkedRun] = []
        with self._lock:
            earlier = self._runs.pop(ticket.owner, None)
            working = sum(other.working for other in self._runs.values())
            # At the bound, the children already working are nearer their end: the new
            # run is not held (its child goes), rather than one of them let go.
            refused = self._closed.is_set() or working >= self.working_limit
            if not refused:
                evicted = self._over_bounds()
                self._runs[ticket.owner] = run
        if earlier is not None:
            earlier.discard("a newer run replaced it")
        if refused:
            held.child.close()
            return
        for old in evicted:
            old.discard("more runs were held than this worker keeps")
        run.start()

    def _over_bounds(self) -> list[ParkedRun]:
        """The oldest held outcomes to let go so that one more fits (under the lock)."""
        ordered = sorted(self._runs.values(), key=lambda run: run.parked_at)
        evicted = ordered[: max(0, len(ordered) - self.held_limit + 1)]
        for run in evicted:
            self._runs.pop(run.ticket.owner, None)
        return evicted

    def take(self, ticket: Ticket) -> ParkedRun | None:
        """The learner's held run if ``ticket`` matches it; any other is discarded (a
        learner's submission ends whatever their last run left working)."""
        with self._lock:
            run = self._runs.pop(ticket.owner, None)
        if run is None:
            return None
        if run.ticket != ticket:
            run.discard("its learner submitted something else")
            return None
        if time.monotonic() > run.expires_at:
            run.discard("it expired")
            return None
        return run

    def forget(self, owner: str) -> None:
        """Discard whatever ``owner``'s last run left (a run that will not be held)."""
        with self._lock:
            run = self._runs.pop(owner, None)
        if run is not None:
            run.discard("its learner ran other code")

    def owners(self) -> set[str]:
        """Whose runs are held: their submissions are worth claiming first (they cost
        little CPU, and a held run that waits in the queue may expire)."""
        with self._lock:
            return set(self._runs)

    def counts(self) -> tuple[int, int]:
        """(held runs still working, held runs in all)."""
        with self._lock:
            runs = list(self._runs.values())
        return sum(run.working for run in runs), len(runs)

    def _watch(self) -> None:
        """Let go of expired runs, and of working ones when memory runs short (the
        newest first: the least work is lost)."""
        while not self._closed.wait(WATCH_SECONDS):
            now = time.monotonic()
            with self._lock:
                expired = [run for run in self._runs.values() if now > run.expires_at]
                working = sorted(
                    (run for run in self._runs.values() if run.working),
                    key=lambda run: run.parked_at,
                    reverse=True,
                )
                available = available_memory_mb() if working else None
                short = available is not None and available < self.min_available_mb
                evicted = expired + (working[:1] if short else [])
                for run in evicted:
                    self._runs.pop(run.ticket.owner, None)
            for run in expired:
                run.discard("it expired")
            if short:
                log.warning(
                    "memory is short (%s MB available): a run working ahead is let go",
                    available,
                )
                for run in working[:1]:
                    run.discard("memory ran short")

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            runs = list(self._runs.values())
            self._runs.clear()
        for run in runs:
            run.discard("the worker stopped")
