"""Waking idle workers the moment there is work, instead of at their next poll.

A route that stores a submission (or a regrade) rings; embedded workers idle in
``wait``. A ring between a worker's empty claim and its wait is not lost: the
worker passes the count it saw before claiming, and any ring since ends the wait
at once. The ring is in-process; app/grading/notifications.py carries it to
workers in other processes and on other machines (PostgreSQL's NOTIFY), and
polling (``poll_seconds``) stays the safety net.
"""

from __future__ import annotations

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
