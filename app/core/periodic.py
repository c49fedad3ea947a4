"""A round of work repeated in a thread of the server: the LMS grade outbox, the mail
outbox, the daily digest. A round that fails is logged and the next one comes at its
time; stopping wakes the thread at once and waits for a round in progress."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class Periodic:
    """Calls ``work`` every ``interval`` seconds (the first after one interval) until
    stopped; ``name`` names the thread and the log line of a failed round."""

    def __init__(
        self,
        *,
        name: str,
        interval: float,
        work: Callable[[], object],
        log: logging.Logger,
        stop_timeout: float = 30.0,
    ) -> None:
        self.interval = interval
        self._work = work
        self._log = log
        self._stop_timeout = stop_timeout
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._stop_timeout)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._work()
            except Exception:
                self._log.exception("%s round failed", self._thread.name)
