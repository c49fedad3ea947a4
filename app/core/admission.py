"""Admission control: at most ``request_threads`` requests in the app at once.

A request holds its database connection across several thread hops (its
dependencies, then the route), so threads alone do not bound connections: a
hundred clients would hold a hundred. Here the hundred-and-first waits at the
door, before it touches anything, and one that waits longer than
``database_wait_seconds`` gets 503 with Retry-After (JSON under /api/, a page
otherwise). Liveness (/healthz), static files and verdict streams skip the queue:
a stream waits for minutes holding nothing, and bounds itself (app/api/streams.py).
"""

from __future__ import annotations

import asyncio
import json
import re

from app.core.body_limits_and_headers import ASGIApp, Receive, Scope, Send

SKIP = ("/healthz", "/static/")
STREAM = re.compile(r"/api/submissions/\d+/events")


class Admission:
    def __init__(self, app: ASGIApp, *, limit: int, wait_seconds: float) -> None:
        self.app, self.limit, self.wait_seconds = app, limit, wait_seconds
        self._slots: asyncio.Semaphore | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"].startswith(SKIP)
            or STREAM.fullmatch(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        if self._slots is None:  # created inside the server's event loop
            self._slots = asyncio.Semaphore(self.limit)
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout=self.wait_seconds)
        except TimeoutError:
            await _busy(scope, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._slots.release()


async def _busy(scope: Scope, send: Send) -> None:
    message = "The server is busy; nothing was changed. Try again in a few seconds."
    if scope["path"].startswith("/api/"):
        body, kind = json.dumps({"detail": message}).encode(), b"application/json"
    else:
        body, kind = f"<!doctype html><title>Busy</title><p>{message}</p>".encode(), b"text/html"
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"2"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
