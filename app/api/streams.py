"""How many verdict streams (Server-Sent Events, app/api/routes/submissions.py) a
server holds open, and how each behaves. A stream holds no database connection
and no admission slot while it waits (app/core/admission.py lets it past): it
looks at the submission the moment a worker of this process says it changed
(app/grading/doorbell.py ``changes``), and every ``LOOK_SECONDS`` in any case (a
worker in another process), with a connection of its own for that moment.

Past ``MAX_STREAMS`` in all a new one is refused with 503; past
``settings.max_streams_per_user`` of one user's (tabs left open, a script opening
one per submission), with 429. Either way the page polls instead, as it always
could. Both counts are checked and taken together under one lock before the
answer starts (``take``), and given back together, once, however the answer ends:
the verdict sent, the client gone, an error (``StreamAnswer``)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator

from fastapi import HTTPException, status
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from app.core.config import settings
from app.errors import TooManyError

MAX_STREAMS = 500
STREAM_SECONDS = 120.0  # then ``again``: the page reads the state once more and goes on
KEEP_ALIVE_SECONDS = 15.0  # a comment line, so proxies keep the connection
LOOK_SECONDS = 0.2

_lock = threading.Lock()  # both counts change together, under it alone
_open = 0
_by_user: dict[int, int] = {}


class Slot:
    """One open stream of ``user_id``'s, counted in both totals until ``release``."""

    def __init__(self, user_id: int) -> None:
        self.user_id = user_id
        self._held = True

    def release(self) -> None:
        """Give the stream back to both counts; a second call does nothing."""
        global _open
        with _lock:
            if not self._held:
                return
            self._held = False
            _open -= 1
            left = _by_user[self.user_id] - 1
            if left:
                _by_user[self.user_id] = left
            else:
                del _by_user[self.user_id]


def take(user_id: int) -> Slot:
    """Count a new stream of ``user_id``'s, or refuse it: 503 when the server holds
    ``MAX_STREAMS``, 429 when the user holds ``settings.max_streams_per_user``."""
    global _open
    with _lock:
        if _open >= MAX_STREAMS:
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "Too many verdicts are being streamed; poll GET /api/submissions/{id} instead.",
                headers={"Retry-After": "1"},
            )
        mine = _by_user.get(user_id, 0)
        if mine >= settings.max_streams_per_user:
            raise TooManyError(
                f"You have {mine} verdict streams open, the most one account may at once;"
                " close one, or poll GET /api/submissions/{id} instead."
            )
        _open += 1
        _by_user[user_id] = mine + 1
    return Slot(user_id)


class StreamAnswer(StreamingResponse):
    """A stream's answer, which gives its slot back when it ends, however it ends
    (its generator may never start: a client gone before the first byte)."""

    def __init__(self, slot: Slot, events: AsyncIterator[str]) -> None:
        super().__init__(
            events,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.release()


def count() -> int:
    return _open


def count_of(user_id: int) -> int:
    return _by_user.get(user_id, 0)
