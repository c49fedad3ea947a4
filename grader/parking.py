"""Run, then Submit: a passing run's child waits, paused before the hidden cases, for
its learner's submission of the same code.

A learner runs the samples until they pass, then submits the same code. Instead of
starting that submission from nothing (a fresh sandbox, its runtime, the code loaded
and the samples' programs compiled again), a run that passes every sample keeps its
child (grader/grade.py ``run_and_hold``): once the run's report is made and what the
child printed is sealed, the child waits here at the lowest CPU share, *without* the
hidden cases. If that learner's next submission is the same code for the same problem
version on the same device, the submission (recorded, counted against the learner's
submit cap, like any) takes the child: only then are a secret draw's hidden inputs
sent to it, at a full share, and its verdict is that hidden phase's (the draw is
recorded with it, so a regrade reproduces it). Where the outcome cannot be used (it
timed out, it was stopped from outside), the submission is graded afresh on the same
draw: what the code did with those inputs shows in that verdict, as it would in an
ordinary submission, and in nothing else. Anything else discards the waiting child:
another submission of the learner (other code, another problem), a new run, the time
limit (``park_seconds``), more held runs than the bound (the one held longest goes),
memory running short on the machine or in its container (grader/running/available_memory.py),
a restart.

What it never changes: hidden inputs enter a sandbox only for a recorded submission
(docs/security.md, "Held runs"); one learner per sandbox, and a sandbox per
submission; no compiled program leaves the child; what the child prints after the
samples is staff's only (``hidden_output``); the verdict's feedback is a submission's.
Its hidden phase is the one an ordinary submission of that code would have had, limits
included (CPU time counted from the run's delivery).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass

from grader.grade import GradingOutcome, HeldRun
from grader.running import available_memory
from grader.running.supervise import CONFIRMATION_WALL_FACTOR

log = logging.getLogger("jaxjudge.parking")
WATCH_SECONDS = 1.0
# Where ``park_children`` is unset, the bound is the memory's: a held child counted at
# HELD_RUN_MB (the most one held 332 MB resident in a class burst of 60 on 2 cores,
# docs/performance.md), at most MOST_HELD per grading process. With 4 held at most, the
# same burst graded 26.0-27.7 submissions a minute (p50 3.3-3.7 s); with 16, 30.0-30.8
# (p50 2.3-2.5 s): a learner reads their run's verdict for a while, and four later runs
# were enough to let theirs go before they submitted.
HELD_RUN_MB = 512
MOST_HELD = 16
HELD_WHERE_MEMORY_IS_UNKNOWN = 4  # the fixed bound of earlier versions


@dataclass(frozen=True)
class Ticket:
    """What a submission must share with a run to be graded in its child: the same
    learner, problem version, device and code (its hash)."""

    owner: str
    version: str
    device: str
    code_sha256: str

    @staticmethod
    def digest(code: str) -> str:
        return hashlib.sha256(code.encode()).hexdigest()

    def fits(self, version: object, code: str) -> bool:
        """Whether a submission of ``code`` for ``version`` is this run's code."""
        return str(version) == self.version and self.digest(code) == self.code_sha256


class ParkedRun:
    """One held run: its child paused before the hidden cases, until a submission of the
    same code takes it (``begin``); then the hidden phase in a thread of its own."""

    def __init__(self, ticket: Ticket, held: HeldRun, seconds: float, since: int = 0) -> None:
        self.ticket, self.held, self.since = ticket, held, since
        self.parked_at = time.monotonic()
        self.expires_at = self.parked_at + seconds
        self.finished = False  # its hidden phase ran to the end, its outcome usable
        self.discarded: str | None = None  # why its outcome will not be used
        self.done = threading.Event()
        self._thread = threading.Thread(
            target=self._hidden_phase, name="jaxjudge-held-run", daemon=True
        )

    @property
    def begun(self) -> bool:
        return self._thread.ident is not None

    def begin(self) -> None:
        """The submission is recorded: the hidden inputs go to the child, at full share."""
        self.held.child.prioritise(busy=True)
        self._thread.start()

    def _hidden_phase(self) -> None:
        held = self.held
        try:
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
            log.exception("a held run failed; its submission will be graded afresh")
            self.discarded = "it failed"
        finally:
            held.child.close()
            self.done.set()

    def discard(self, reason: str) -> None:
        """Let it go: a waiting child is closed, one in its hidden phase stopped; its
        outcome will not be used."""
        if self.discarded is None and not self.finished:
            self.discarded = reason
        if not self.begun:
            self.held.child.close()
            self.done.set()
        elif not self.done.is_set():
            self.held.child.kill()

    def verdict(self, timeout: float) -> GradingOutcome | None:
        """The submission's grading once the hidden phase ends, on the run's draw, which
        the submission records (None: discarded, or not in time)."""
        if not self.done.wait(timeout):
            self.discard("it did not finish in time")
            return None
        if not self.finished:
            return None
        report = self.held.submit_report()
        report.continued_from_run = report.run_draw = True  # for staff: how it was graded
        return GradingOutcome(report, draw_to_record=self.held.variant)


def _spoilt(timed_out: bool, killed_from_outside: bool) -> str | None:
    """Why an outcome may say more about the machine than the submission: a time-out
    (its clock ran from a child that waited at the lowest share), or a stop from
    outside. The ordinary path decides those (it confirms a time-out on a quiet child)."""
    if timed_out:
        return "it ran out of time in the held child"
    if killed_from_outside:
        return "it was stopped from outside"
    return None


class ParkingLot:
    """Held runs by learner, one each, in one grading process (its workers share it)."""

    def __init__(self, *, seconds: float, limit: int | None, min_available_mb: int) -> None:
        self.seconds = seconds
        self.limit = limit
        self.min_available_mb = min_available_mb
        self._runs: dict[str, ParkedRun] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._watcher = threading.Thread(
            target=self._watch, name="jaxjudge-parking-watch", daemon=True
        )
        self._watcher.start()

    @property
    def enabled(self) -> bool:
        return self.seconds > 0 and self.limit != 0

    def bound(self) -> int:
        """How many runs may be held now: ``limit`` where it is set; otherwise those held
        (their memory is spent already) and as many more as the memory left above
        ``min_available_mb`` holds at ``HELD_RUN_MB`` each, ``MOST_HELD`` at most."""
        if self.limit is not None:
            return self.limit
        available = available_memory.available_mb()
        if available is None:
            return HELD_WHERE_MEMORY_IS_UNKNOWN
        with self._lock:
            held = len(self._runs)
        room = max(0, available - self.min_available_mb) // HELD_RUN_MB
        return min(MOST_HELD, held + room)

    def park(self, ticket: Ticket, held: HeldRun, since: int = 0) -> None:
        """Keep ``held`` for its learner's next submission, in place of any other; at the
        bound, the run held longest is let go (the newest is the likeliest submitted).
        ``since``: the run's place in its learner's activity (its submission's number),
        for telling what they did after it (``held``)."""
        run = ParkedRun(ticket, held, self.seconds, since)
        released: list[tuple[ParkedRun, str]] = []
        bound = self.bound()
        with self._lock:
            if (earlier := self._runs.pop(ticket.owner, None)) is not None:
                released.append((earlier, "a newer run replaced it"))
            refused = self._closed.is_set() or bound < 1
            if not refused:
                oldest = sorted(self._runs.values(), key=lambda other: other.parked_at)
                for other in oldest[: max(0, len(oldest) - bound + 1)]:
                    self._runs.pop(other.ticket.owner)
                    released.append((other, "more runs were held than this worker keeps"))
                self._runs[ticket.owner] = run
        for other, reason in released:
            other.discard(reason)
        if refused:
            held.child.close()
        else:  # whatever the learner's code still does while it waits, it does slowly
            held.child.prioritise(busy=False)

    def take(self, ticket: Ticket) -> ParkedRun | None:
        """The learner's held run, its hidden phase begun, if ``ticket`` (a recorded
        submission's) matches it; any other is discarded (a learner's submission ends
        whatever their last run left)."""
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
        run.begin()
        return run

    def forget(
        self, owner: str, reason: str = "its learner ran other code", since: int | None = None
    ) -> None:
        """Discard whatever ``owner``'s last run left (a run that will not be held), or,
        given ``since``, that run only if it is still the one held (activity of theirs
        that another process saw)."""
        with self._lock:
            run = self._runs.get(owner)
            if run is None or (since is not None and run.since != since):
                return
            del self._runs[owner]
        run.discard(reason)

    def held(self) -> dict[str, tuple[Ticket, int]]:
        """Whose runs are held, for what code, and since when (``park``'s ``since``): a
        submission of that code is worth claiming first (it costs little, and a held run
        that waits may expire); anything else its learner did since ends it."""
        with self._lock:
            return {owner: (run.ticket, run.since) for owner, run in self._runs.items()}

    def _watch(self) -> None:
        """Let go of expired runs, and of the one held longest when memory runs short."""
        while not self._closed.wait(WATCH_SECONDS):
            now = time.monotonic()
            with self._lock:
                expired = [run for run in self._runs.values() if now > run.expires_at]
                for run in expired:
                    self._runs.pop(run.ticket.owner)
                available = available_memory.available_mb() if self._runs else None
                short = available is not None and available < self.min_available_mb
                oldest = min(self._runs.values(), key=lambda run: run.parked_at, default=None)
                if short and oldest is not None:
                    self._runs.pop(oldest.ticket.owner)
            for run in expired:
                run.discard("it expired")
            if short and oldest is not None:
                log.warning(
                    "memory is short (%s MB available): the run held longest is let go",
                    available,
                )
                oldest.discard("memory ran short")

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            runs = list(self._runs.values())
            self._runs.clear()
        for run in runs:
            run.discard("the worker stopped")
