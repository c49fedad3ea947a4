"""The FastAPI application: routers, start-up (migrations, trusted runs, workers), request logs."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy import text
from starlette.middleware.sessions import SessionMiddleware

from app import authoring, catalog, web_sessions
from app.api.routes import problems, submissions, tokens
from app.core.config import PROJECT_ROOT, settings
from app.core.db import engine, migrate, session_scope
from app.core.http_guards import BodyLimit, SecurityHeaders
from app.core.sessions import secret_key
from app.web import account as account_pages
from app.web import authoring as authoring_pages
from app.web import course_insights, pages
from app.web import courses as course_pages
from app.worker import EmbeddedWorkers

log = logging.getLogger("jaxjudge.requests")


def _sync_problems() -> None:
    """Record changed problem folders as versions (the live ones stay live)."""
    with session_scope() as session:
        authoring.forget_interrupted_checks(session)
        for line in catalog.sync(session).lines():
            logging.getLogger("jaxjudge.catalog").info("sync: %s", line)


def _prepare_problems() -> None:
    """Trusted runs of every live version: expected outputs, before a learner waits for them."""
    from grader import expected

    with session_scope() as session:
        live = catalog.live_problems(session)
    for problem, result in expected.prepare_all([problem for _version, problem in live]):
        if isinstance(result, Exception):
            logging.getLogger("jaxjudge").error("preparing %s failed: %s", problem.slug, result)


def create_app(*, workers: int = 0, prepare: bool = True) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        migrate()
        _sync_problems()
        if prepare:
            threading.Thread(target=_prepare_problems, name="jaxjudge-prepare", daemon=True).start()
        pool = EmbeddedWorkers(threads=workers) if workers > 0 else None
        if pool:
            pool.start()
        yield
        if pool:
            pool.stop()

    # FastAPI's own /docs page loads Swagger UI from a CDN; ours serves the
    # vendored copy in app/static/vendor/swagger-ui (classrooms are often offline).
    app = FastAPI(
        title="jaxjudge",
        summary="Graded JAX, Flax and Optax exercises.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.include_router(problems.router)
    app.include_router(submissions.router)
    app.include_router(tokens.router)
    app.include_router(pages.router)
    app.include_router(account_pages.router)
    app.include_router(course_pages.router)
    app.include_router(course_insights.router)
    app.include_router(authoring_pages.router)
    app.mount("/static", StaticFiles(directory=PROJECT_ROOT / "app" / "static"), name="static")
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret_key(),
        session_cookie="jaxjudge_session",
        same_site="lax",
        https_only=settings.secure_cookies,
        max_age=web_sessions.SESSION_DAYS * 24 * 3600,
    )

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
        with engine().connect() as connection:
            connection.execute(text("SELECT 1"))
        return {"status": "ok"}

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
                }
            )
        )
        return response

    # Outermost: the body limit runs before anything reads the body (authentication
    # included), the headers are added to every answer, 413s and 500s too.
    app.add_middleware(
        BodyLimit,
        default=settings.max_request_bytes,
        limits={("POST", "/api/submissions"): 2 * settings.max_source_bytes + 64 * 1024},
    )
    app.add_middleware(SecurityHeaders)
    return app


# The vendored Swagger UI, started by a script file: the pages allow no inline script.
API_DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jaxjudge API</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/vendor/swagger-ui/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/static/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/static/api-docs.js"></script></body></html>
"""
