"""Waking idle workers the moment there is work, instead of at their next poll.

A route that stores a submission (or a regrade) rings; embedded workers idle in
``wait``. A ring between a worker's empty claim and its wait is not lost: the
worker passes the count it saw before claiming, and any ring since ends the wait
at once. The ring is in-process; app/grading/notifications.py carries it to
workers in other processes and on other machines (PostgreSQL's NOTIFY), and
polling (``poll_seconds``) stays the safety net.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading


class Doorbell:
    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._rings = 0

    def rings(self) -> int:
        """How many times it has rung: pass this to ``wait`` to miss nothing after it."""
        with self._condition:
            return self._rings

    def ring(self) -> None:
        with self._condition:
            self._rings += 1
            self._condition.notify_all()

    def wait(self, seen: int, timeout: float) -> bool:
        """Until a ring after ``seen`` or ``timeout`` seconds; True if it rang."""
        with self._condition:
            return self._condition.wait_for(lambda: self._rings != seen, timeout)


new_work = Doorbell()


class Changes:
    """Which submissions changed (claimed, samples in, verdict recorded), for the
    verdict streams of this process (app/api/routes/submissions.py): a stream wakes the
    moment its submission changes instead of at its next look. Rung from worker
    threads, heard on the event loop. Workers in other processes do not ring here: the
    stream's look every ``LOOK_SECONDS`` stays the safety net."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watching: dict[int, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def watch(self, submission_id: int) -> asyncio.Event:
        """An event set whenever ``submission_id`` changes (call on the event loop)."""
        event = asyncio.Event()
        with self._lock:
            self._watching.setdefault(submission_id, set()).add((asyncio.get_running_loop(), event))
        return event

    def unwatch(self, submission_id: int, event: asyncio.Event) -> None:
        with self._lock:
            watchers = self._watching.get(submission_id, set())
            watchers -= {pair for pair in watchers if pair[1] is event}
            if not watchers:
                self._watching.pop(submission_id, None)

    def changed(self, submission_id: int) -> None:
        """From any thread."""
        with self._lock:
            watchers = list(self._watching.get(submission_id, ()))
        for loop, event in watchers:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                loop.call_soon_threadsafe(event.set)


changes = Changes()
