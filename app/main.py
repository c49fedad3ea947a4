"""The FastAPI application: routers, start-up (migrations, trusted runs, workers), request logs."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI, Request, Response, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SqlTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware

from app.api.routes import course_grading as course_grading_api
from app.api.routes import course_people as course_people_api
from app.api.routes import courses as course_api
from app.api.routes import problems, submissions, tokens
from app.core.admission import Admission
from app.core.config import PROJECT_ROOT, grader_settings, settings
from app.core.csv_uploads import CSV_UPLOAD_BYTES
from app.core.db import migrate, session_scope
from app.core.http_guards import BodyLimit, PartitionedCookies, SecurityHeaders
from app.core.sessions import secret_key
from app.data import catalog, usage, web_sessions
from app.errors import DomainError
from app.grading import checks as authoring
from app.grading import heartbeats
from app.grading.preparation import Preparer
from app.grading.worker import EmbeddedWorkers
from app.lti import outbox as lti_outbox
from app.web import account as account_pages
from app.web import auth as auth_pages
from app.web import authoring as authoring_pages
from app.web import (
    client_download,
    course_grading,
    course_insights,
    course_people,
    course_similarity,
)
from app.web import courses as course_pages
from app.web import lti as lti_pages
from app.web import lti_admin as lti_admin_pages
from app.web import lti_pickers as lti_picker_pages
from app.web import operations as operations_pages
from app.web import problems as problem_pages
from app.web.auth import sign_in_url
from app.web.guards import SignInRequiredError
from app.web.render import page

log = logging.getLogger("jaxjudge.requests")


def _submission_of(request: Request) -> int | None:
    """The submission a request stored (the route says so) or names in its path."""
    stored = getattr(request.state, "submission_id", None)
    named = str(request.path_params.get("submission_id", ""))
    return stored if isinstance(stored, int) else int(named) if named.isdigit() else None


def _sync_problems() -> None:
    """Record changed problem folders as versions (the live ones stay live)."""
    with session_scope() as session:
        authoring.forget_interrupted_checks(session)
        for line in catalog.sync(session).lines():
            logging.getLogger("jaxjudge.catalog").info("sync: %s", line)


def create_app(*, workers: int = 0, prepare: bool = True) -> FastAPI:
    settings.check_for_production()  # no generated key, no cookies without TLS

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # As many request threads as the database pool has connections for them
        # (app/core/db.py): a request waits for a thread, never for a connection.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.request_threads
        migrate()
        _sync_problems()
        # Trusted runs ahead of learners: expected outputs and stored samples.
        preparer = Preparer() if prepare else None
        if preparer:
            preparer.start()
        recorder = usage.Recorder()
        recorder.start()
        lms_outbox = lti_outbox.Deliverer()
        lms_outbox.start()
        pool = EmbeddedWorkers(threads=workers) if workers > 0 else None
        if pool:
            pool.start()
        yield
        if pool:
            pool.stop()
        lms_outbox.stop()
        recorder.stop()
        if preparer:
            preparer.stop()

    # FastAPI's own /docs page loads Swagger UI from a CDN; ours serves the
    # vendored copy in app/web/static/vendor/swagger-ui (classrooms are often offline).
    app = FastAPI(
        title="jaxjudge",
        summary="Graded JAX, Flax and Optax exercises.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.include_router(problems.router)
    app.include_router(problems.tracks_router)
    app.include_router(submissions.router)
    app.include_router(tokens.router)
    app.include_router(course_api.router)
    app.include_router(course_people_api.router)
    app.include_router(course_grading_api.router)
    app.include_router(auth_pages.router)
    app.include_router(problem_pages.router)
    app.include_router(account_pages.router)
    app.include_router(client_download.router)
    app.include_router(course_pages.router)
    app.include_router(course_insights.router)
    app.include_router(course_people.router)
    app.include_router(course_grading.router)
    app.include_router(course_similarity.router)
    app.include_router(authoring_pages.router)
    app.include_router(operations_pages.router)
    app.include_router(lti_pages.router)
    app.include_router(lti_picker_pages.router)
    app.include_router(lti_admin_pages.router)
    app.mount(
        "/static", StaticFiles(directory=PROJECT_ROOT / "app" / "web" / "static"), name="static"
    )
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

    @app.exception_handler(OperationalError)
    @app.exception_handler(SqlTimeoutError)
    @app.exception_handler(InterfaceError)
    async def database_unavailable(request: Request, error: Exception) -> Response:
        """The database is locked, busy, read-only, full or gone: try again soon (503),
        in the API's JSON shape or as a readable page; one log line, no traceback."""
        log.warning(
            "database unavailable for %s %s: %s",
            request.method,
            request.url.path,
            _first_line(error),
        )
        message = "The database is busy or unavailable right now; nothing was changed. Try again in a few seconds."
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": message}, status_code=503, headers=headers)
        return HTMLResponse(
            UNAVAILABLE_PAGE.format(message=message), status_code=503, headers=headers
        )

    @app.exception_handler(DomainError)
    async def domain_error(request: Request, error: DomainError) -> Response:
        """Every domain error becomes its status once, here: JSON under /api/, a page elsewhere."""
        retry = getattr(error, "retry_after", None)
        headers = {"Retry-After": str(retry)} if retry else None
        return _error_answer(request, error.status, str(error), headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        return _error_answer(request, error.status_code, str(error.detail), error.headers)

    @app.exception_handler(SignInRequiredError)
    async def sign_in_first(request: Request, _error: SignInRequiredError) -> Response:
        """A page for signed-in users: sign in, then come back (to the page for a GET;
        home after a form post, which a redirect cannot replay)."""
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        location = sign_in_url(target if request.method == "GET" else "/")
        return RedirectResponse(location, status_code=status.HTTP_303_SEE_OTHER)

    @app.exception_handler(DataError)
    async def unstorable_value(request: Request, error: DataError) -> Response:
        """A value the database refuses to store (a NUL character in PostgreSQL text, a
        string past its column): the request's fault, said as such; nothing was changed."""
        log.warning("value refused by the database for %s %s", request.method, request.url.path)
        message = "The request holds a value that cannot be stored (too long, or a NUL character)."
        return _error_answer(request, 422, message, None)

    @app.exception_handler(OverflowError)
    async def id_out_of_range(request: Request, _error: OverflowError) -> Response:
        """An id past what the database stores (2^63 and up) names nothing."""
        return JSONResponse({"detail": "No such item: the id is out of range."}, status_code=404)

    @app.exception_handler(UnicodeError)
    async def invalid_text(request: Request, _error: UnicodeError) -> Response:
        message = (
            "The request holds text that is not valid Unicode (a lone surrogate or bad bytes)."
        )
        return JSONResponse({"detail": message}, status_code=422)

    @app.get("/docs", include_in_schema=False)
    def api_docs() -> Response:
        return HTMLResponse(API_DOCS_PAGE)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        """Liveness: the process answers. Says nothing of the database (see /readyz)."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    def readyz() -> JSONResponse:
        """Readiness: the database takes a committed write, a grading process reported in
        the last 15 s, and a warm sandbox is ready. 503 with the reasons when not."""
        return JSONResponse(*readiness())

    @app.get("/metrics", include_in_schema=False)
    def metrics(request: Request) -> Response:
        """Prometheus' view of the queue, the verdicts and every worker (app/metrics.py)."""
        from app import metrics as prometheus

        if not prometheus.allowed(
            token=settings.metrics_token,
            authorization=request.headers.get("authorization"),
            client=request.client.host if request.client else None,
            forwarded="x-forwarded-for" in request.headers,
        ):
            return JSONResponse(
                {
                    "detail": "Metrics need JAXJUDGE_METRICS_TOKEN as a bearer token, or a scrape from this machine."
                },
                status_code=403,
            )
        return Response(prometheus.render(), media_type=prometheus.CONTENT_TYPE)

    @app.middleware("http")
    async def request_log(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        log.info(
            json.dumps(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "status": response.status_code,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                    # The submission a request stored or read: the same id as in the
                    # worker's and the sandbox's lines (grader/log_context.py).
                    "submission": _submission_of(request),
                }
            )
        )
        return response

    # Outermost: the body limit runs before anything reads the body (authentication
    # included), the headers are added to every answer, 413s and 500s too.
    app.add_middleware(
        BodyLimit,
        default=settings.max_request_bytes,
        limits={
            ("POST", "/api/submissions"): 2 * grader_settings.max_source_bytes + 64 * 1024,
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
    return app


RETRY_AFTER_SECONDS = 2
ERROR_TITLES = {
    400: "That did not work",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed",
    409: "Not now",
    413: "Too large",
    429: "Slow down",
}
UNAVAILABLE_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Try again in a moment · jaxjudge</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main><section class="card narrow"><h1>Try again in a moment</h1><p>{message}</p>
<p><a href="">Reload</a></p></section></main></body></html>"""


def _error_answer(
    request: Request, code: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    if request.url.path.startswith("/api/") or "session" not in request.scope:
        return JSONResponse({"detail": message}, status_code=code, headers=dict(headers or {}))
    user = getattr(request.state, "viewer", None)
    title = ERROR_TITLES.get(code, "Something went wrong")
    answer = page(request, "error.html", user, code, message=message, title=title)
    if headers:
        answer.headers.update(headers)
    return answer


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__


def readiness() -> tuple[dict[str, object], int]:
    """What /readyz answers, and its status."""
    problems: list[str] = []
    workers: list[dict[str, object]] = []
    try:
        with session_scope() as session:
            heartbeats.database_writable(session)
            workers = [
                {"name": w.name, "idle": w.idle_children, "pool": w.pool_size, "warm": w.warm}
                for w in heartbeats.live(session)
            ]
    except (OperationalError, SqlTimeoutError, InterfaceError) as error:
        problems.append(f"database: {_first_line(error)}")
    if not problems and not workers:
        problems.append("no grading worker reported in the last 15 s")
    elif workers and not any(w["warm"] for w in workers):
        problems.append("no grading worker has a warm sandbox yet")
    body = {"ready": not problems, "problems": problems, "workers": workers}
    return body, 200 if not problems else 503


# The vendored Swagger UI, started by a script file: the pages allow no inline script.
API_DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jaxjudge API</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/vendor/swagger-ui/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/static/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/static/api-docs.js"></script></body></html>
"""
