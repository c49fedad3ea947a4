"""The browser's cookie: its signing key and the CSRF token it carries.

The cookie is Starlette's signed session (HttpOnly, SameSite=Lax, Secure
behind TLS) and holds two random values: the id of a server-side session
(app/data/web_sessions.py: who is signed in, revocable) and the CSRF token that
every state-changing form and API call from the page must echo, compared in
constant time.
"""

from __future__ import annotations

import os
import secrets

from fastapi import Request

from app.core.config import grader_settings, settings
from app.errors import ForbiddenError


def secret_key() -> str:
    if settings.secret_key:
        return settings.secret_key
    path = grader_settings.data_dir / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written under a temporary name and linked in place: two processes starting
        # at once agree on one key, and none reads a half-written file.
        draft = path.with_name(f".secret_key.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # another process won; use its key
        finally:
            draft.unlink()
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
        or not secrets.compare_digest(expected.encode(), submitted.encode())
    ):
        raise ForbiddenError("This form has expired; reload the page and try again.")


def browser_session_id(request: Request) -> str | None:
    """The id of the server-side session the browser's cookie names, if it names one
    (app/data/web_sessions.py says whether it is live and whose)."""
    if "session" not in request.scope:
        return None
    sid = request.session.get("sid")
    return sid if isinstance(sid, str) else None
