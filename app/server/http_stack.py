"""The middleware every request passes through, outermost last: the browser session, the
request log line, then the body limit, admission, security headers and partitioned
cookies (app/core/body_limits_and_headers.py, app/core/admission.py)."""

from __future__ import annotations

import json
import logging
import time

from fastapi import FastAPI
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.admission import Admission
from app.core.body_limits_and_headers import BodyLimit, PartitionedCookies, SecurityHeaders
from app.core.config import grader_settings, settings
from app.core.csv_uploads import CSV_UPLOAD_BYTES
from app.core.sessions import secret_key
from app.data import web_sessions
from app.grading import notebooks

log = logging.getLogger("jaxjudge.requests")


def _submission_of(scope: Scope) -> int | None:
    """The submission a request stored (the route says so) or names in its path."""
    state = scope.get("state") or {}
    stored = state.get("submission_id") if isinstance(state, dict) else None
    named = str((scope.get("path_params") or {}).get("submission_id", ""))
    return stored if isinstance(stored, int) else int(named) if named.isdigit() else None


class RequestLog:
    """One JSON line per request. Plain ASGI, not ``BaseHTTPMiddleware``: that one costs
    a task and a stream per request, a good part of a small read's time under load."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets when the app fails before answering

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            log.info(
                json.dumps(
                    {
                        "method": scope["method"],
                        "path": scope["path"],
                        "status": status,
                        "ms": round((time.perf_counter() - started) * 1000, 1),
                        # The submission a request stored or read: the same id as in the
                        # worker's and the sandbox's lines (grader/running/log_context.py).
                        "submission": _submission_of(scope),
                    }
                )
            )


def install_middleware(app: FastAPI) -> None:
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret_key(),
        session_cookie="jaxjudge_session",
        # Inside an LMS's frame the cookie is a third party's: SameSite=None (with TLS),
        # only when LMS framing is configured (docs/lti.md); the forms carry CSRF tokens.
        same_site="none" if settings.frame_origins and settings.secure_cookies else "lax",
        https_only=settings.secure_cookies,
        max_age=web_sessions.SESSION_DAYS * 24 * 3600,
    )

    app.add_middleware(RequestLog)

    # Outermost: the body limit runs before anything reads the body (authentication
    # included), the headers are added to every answer, 413s and 500s too.
    app.add_middleware(
        BodyLimit,
        default=settings.max_request_bytes,
        limits={
            ("POST", "/api/submissions"): 2 * grader_settings.max_source_bytes + 64 * 1024,
            # A learner's notebook (multipart), alone or for a course's notebook assignment.
            **{
                ("POST", path): notebooks.MAX_NOTEBOOK_BYTES + 64 * 1024
                for path in (
                    "/api/submissions/notebook",
                    r"/(api/)?courses/\d+/notebook-submissions",
                )
            },
            # The course problem editor posts every file of a problem, percent-encoded.
            ("POST", r"/courses/\d+/authoring/[a-z0-9-]+"): 3 * settings.course_problem_bytes,
            # A zip of problem folders, and a git host's push event (GitHub's can be large).
            ("POST", r"/courses/\d+/problem-folders/import"): settings.problem_upload_bytes
            + 64 * 1024,
            ("POST", r"/hooks/courses/\d+/problems"): 1024 * 1024,
            # An instructor's CSV uploads: 5,000 rows (their own cap) fit in far less.
            **{
                (method, path): CSV_UPLOAD_BYTES
                for method, path in (
                    ("POST", r"/api/courses/\d+/(extensions\.csv|student-ids)"),
                    ("POST", r"/courses/\d+/(extensions/upload|student-ids)"),
                )
            },
        },
    )
    app.add_middleware(
        Admission, limit=settings.request_threads, wait_seconds=2 * settings.database_wait_seconds
    )
    app.add_middleware(SecurityHeaders, frame_origins=settings.frame_origins)
    if settings.frame_origins and settings.secure_cookies:
        # In the LMS's frame the browser keeps the session cookie under the LMS's site
        # (CHIPS), where it blocks unpartitioned third-party cookies.
        app.add_middleware(PartitionedCookies, names={"jaxjudge_session"})
