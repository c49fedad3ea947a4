"""Throttles keyed on the client's address, in memory (per server process).

The address is the direct peer's, unless the peer is a reverse proxy named in
``--forwarded-allow-ips`` (then uvicorn takes it from X-Forwarded-For): a
client cannot choose it by sending a header. Accounts have their own delay,
kept in the database (app/data/accounts.py).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque

from fastapi import Request


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


class SlidingWindow:
    """At most ``limit`` events per key within ``seconds``."""

    def __init__(self, limit: int, seconds: float) -> None:
        self.limit, self.seconds = limit, seconds
        self._events: defaultdict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> deque[float]:
        events = self._events[key]
        while events and events[0] <= now - self.seconds:
            events.popleft()
        return events

    def wait_seconds(self, key: str) -> int:
        """0 when one more event is allowed now, else how long until it is."""
        now = time.monotonic()
        with self._lock:
            events = self._recent(key, now)
            if len(events) < self.limit:
                return 0
            return int(events[0] + self.seconds - now) + 1

    def record(self, key: str) -> None:
        with self._lock:
            self._recent(key, time.monotonic()).append(time.monotonic())
            if len(self._events) > 100_000:  # bounded memory under a flood of addresses
                self._events.clear()

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


# Failed sign-ins per address (every name together), and new accounts per address.
failed_sign_ins = SlidingWindow(limit=20, seconds=300)
sign_ups = SlidingWindow(limit=5, seconds=3600)
# Wrong course join codes, per account and per address: a code is a password to a course.
wrong_join_codes_by_account = SlidingWindow(limit=10, seconds=900)
wrong_join_codes_by_address = SlidingWindow(limit=20, seconds=300)
# LMS logins started per address (each writes a row): a class behind one NAT launching
# at once stays far below it; a script making rows does not.
lti_logins = SlidingWindow(limit=600, seconds=300)
# SSO sign-ins started per address (each writes a pending request row), as for LTI.
sso_sign_ins = SlidingWindow(limit=600, seconds=300)
# Password-reset requests, per address and per account (past them: the same answer, no
# mail), and verification mails per account (each is a mail to an address it typed).
password_resets_by_address = SlidingWindow(limit=10, seconds=3600)
password_resets_by_account = SlidingWindow(limit=3, seconds=3600)
verification_mails_by_account = SlidingWindow(limit=5, seconds=3600)
