"""ASGI wrappers around the whole app: request bodies bounded before they are read,
security headers on every response, and (for LMS frames) partitioned cookies. They
know no user or route; who may see a page is app/web/guards.py, who may call the API
app/api/deps.py.

Bodies: a request whose Content-Length is over its route's limit is answered
413 at once, unread; a body sent without a length (chunked) is counted as it
arrives and answered 413 the moment it passes the limit. Either way the
connection is closed and nothing past the limit is buffered, before any
authentication runs. Behind a reverse proxy, set the proxy's own limit to
match (docs/deployment.md).

Headers: a Content-Security-Policy that allows only the app's own scripts (the
pages have no inline script) and no framing, plus nosniff and a referrer
policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# Scripts only from the app's own files: no inline script, no eval. Styles may also
# be set inline, because the editor (CodeMirror) sizes its elements with style
# attributes; a style cannot run code.
def content_security_policy(*, frame_ancestors: str = "'none'", form_action: str = "'self'") -> str:
    """The policy, with who may frame the page and where its forms may post."""
    return (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        f"form-action {form_action}; frame-ancestors {frame_ancestors}"
    )


def frame_ancestors(frame_origins: list[str]) -> str:
    """``frame-ancestors``: none, or this site and the LMSs allowed to frame it."""
    return " ".join(["'self'", *frame_origins]) if frame_origins else "'none'"


CONTENT_SECURITY_POLICY = content_security_policy()
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]


def security_headers(frame_origins: list[str]) -> list[tuple[bytes, bytes]]:
    """The headers every response gets. ``frame_origins``: LMSs that may frame the pages
    (LTI launches inside a course); none: no framing at all."""
    if not frame_origins:
        return SECURITY_HEADERS
    policy = content_security_policy(frame_ancestors=frame_ancestors(frame_origins))
    return [
        (b"content-security-policy", policy.encode()),
        *(
            header
            for header in SECURITY_HEADERS
            if header[0] not in {b"content-security-policy", b"x-frame-options"}
        ),
    ]


class SecurityHeaders:
    def __init__(self, app: ASGIApp, frame_origins: list[str] | None = None) -> None:
        self.app = app
        self.headers = security_headers(frame_origins or [])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((name, value) for name, value in self.headers if name not in present),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)


class BodyLimit:
    """``limits`` maps (method, path pattern) to a byte limit, the pattern a regular
    expression matched against the whole path; everything else gets ``default``."""

    def __init__(self, app: ASGIApp, *, default: int, limits: dict[tuple[str, str], int]) -> None:
        self.app, self.default = app, default
        self.limits = [
            (method, re.compile(pattern), limit) for (method, pattern), limit in limits.items()
        ]

    def limit_for(self, scope: Scope) -> int:
        for method, pattern, limit in self.limits:
            if scope["method"] == method and pattern.fullmatch(scope["path"]):
                return limit
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope)
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await _refuse(scope, send, 400, "The Content-Length header is not a number.")
                return
            if int(declared) > limit:
                await _refuse(scope, send, 413, _too_large(limit))
                return
        state = {"received": 0, "refused": False, "started": False}

        async def counted_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request" and not state["refused"]:
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["refused"] = True
                    if not state["started"]:
                        await _refuse(scope, send, 413, _too_large(limit))
                    return {"type": "http.disconnect"}  # the app stops reading here
            return message

        async def guarded_send(message: Message) -> None:
            if state["refused"]:
                return  # our 413 went out instead of whatever the app answers
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, counted_receive, guarded_send)


def _too_large(limit: int) -> str:
    return f"The request body is larger than this address accepts ({limit // 1024} KiB)."


async def _refuse(scope: Scope, send: Send, status: int, message: str) -> None:
    if scope["path"].startswith("/api/"):
        body, kind = json.dumps({"detail": message}).encode(), b"application/json"
    else:
        body, kind = (
            f"<!doctype html><title>{status}</title><p>{message}</p>".encode(),
            b"text/html",
        )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class PartitionedCookies:
    """Marks the named cookies ``Partitioned`` (CHIPS) as they are set: a cookie set in
    an LMS's frame is then kept under the LMS's site, which Chrome and Firefox allow
    where they block third-party cookies. (Python's http.cookies learns the attribute
    only in 3.14, so Starlette cannot set it here.)"""

    def __init__(self, app: ASGIApp, names: set[str]) -> None:
        self.app = app
        self.prefixes = tuple(f"{name}=".encode() for name in names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def partitioned(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (name, partition(value))
                    if name.lower() == b"set-cookie" and value.startswith(self.prefixes)
                    else (name, value)
                    for name, value in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, partitioned)


def partition(set_cookie: bytes) -> bytes:
    return set_cookie if b"partitioned" in set_cookie.lower() else set_cookie + b"; Partitioned"
