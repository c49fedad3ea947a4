"""Every error a request can end in, answered once: JSON ``{"detail"}`` under /api/ (and
for requests without a browser session), a readable page elsewhere. Domain errors carry
their status (app/errors.py); the database's own failures become 503 or 422."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request, Response, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as SqlTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import DomainError, first_line
from app.web.auth import sign_in_url
from app.web.guards import SignInRequiredError
from app.web.render import page

log = logging.getLogger("jaxjudge.requests")


def install_error_handlers(app: FastAPI) -> None:
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
            first_line(error),
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
