"""Browser sessions: the signing key, CSRF tokens and sign-in throttling.

Sessions are Starlette's signed cookie (HttpOnly, SameSite=Lax). Every form
that changes state carries a per-session CSRF token, compared in constant time.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections import defaultdict, deque

from fastapi import HTTPException, Request, status

from app.core.config import settings

MAX_FAILURES = 5
FAILURE_WINDOW_SECONDS = 300


def secret_key() -> str:
    if settings.secret_key:
        return settings.secret_key
    path = settings.data_dir / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


def csrf_token(request: Request) -> str:
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def check_csrf(request: Request, submitted: str | None) -> None:
    expected = request.session.get("csrf")
    if (
        not isinstance(expected, str)
        or not submitted
        or not secrets.compare_digest(expected, submitted)
    ):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "This form has expired; reload the page and try again."
        )


class SignInThrottle:
    """At most MAX_FAILURES failed sign-ins per (address, name) in a sliding window."""

    def __init__(self) -> None:
        self._failures: defaultdict[tuple[str, str], deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        failures = self._failures[key]
        while failures and failures[0] < now - FAILURE_WINDOW_SECONDS:
            failures.popleft()
        return failures

    def wait_seconds(self, address: str, name: str) -> int:
        """0 when a sign-in may be tried now."""
        now = time.monotonic()
        with self._lock:
            failures = self._recent((address, name.lower()), now)
            if len(failures) < MAX_FAILURES:
                return 0
            return int(failures[0] + FAILURE_WINDOW_SECONDS - now) + 1

    def failed(self, address: str, name: str) -> None:
        with self._lock:
            self._failures[(address, name.lower())].append(time.monotonic())

    def succeeded(self, address: str, name: str) -> None:
        with self._lock:
            self._failures.pop((address, name.lower()), None)


throttle = SignInThrottle()
