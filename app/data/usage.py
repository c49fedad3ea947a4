"""When API tokens and browser sessions were last used, recorded off the request path.

Authenticating a request writes nothing: it notes the use in memory, and a
background thread writes every noted use in one transaction every
``FLUSH_SECONDS`` (and at shutdown). So fifty clients polling at once never
queue behind one another for SQLite's write lock; the recorded time is at
most that much behind.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.exc import SQLAlchemyError

from app.core.db import session_scope
from app.models import ApiToken, WebSession, utcnow

log = logging.getLogger("jaxjudge.usage")
FLUSH_SECONDS = 30.0

_lock = threading.Lock()
_tokens: dict[int, datetime] = {}
_sessions: dict[int, datetime] = {}


def token_used(token_id: int) -> None:
    with _lock:
        _tokens[token_id] = utcnow()


def session_seen(session_id: int) -> None:
    with _lock:
        _sessions[session_id] = utcnow()


def flush() -> None:
    """Write every noted use; on a database error keep them for the next flush."""
    with _lock:
        tokens, sessions = dict(_tokens), dict(_sessions)
        _tokens.clear()
        _sessions.clear()
    if not tokens and not sessions:
        return
    try:
        with session_scope() as session:
            for token_id, when in tokens.items():
                session.execute(
                    update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=when)
                )
            for session_id, when in sessions.items():
                session.execute(
                    update(WebSession).where(WebSession.id == session_id).values(last_seen_at=when)
                )
    except SQLAlchemyError as error:
        log.warning("could not record token and session use (will retry): %s", type(error).__name__)
        with _lock:
            for token_id, when in tokens.items():
                _tokens.setdefault(token_id, when)
            for session_id, when in sessions.items():
                _sessions.setdefault(session_id, when)


class Recorder:
    """The background thread that flushes noted uses."""

    def __init__(self, every: float = FLUSH_SECONDS) -> None:
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jaxjudge-usage", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            flush()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        flush()
