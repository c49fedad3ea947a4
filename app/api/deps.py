"""Injected dependencies: database session and the authenticated user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request, status
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.core.sessions import check_csrf
from app.data import api_tokens, web_sessions
from app.models import User


def get_session() -> Iterator[Session]:
    with session_scope() as session:
        yield session


# scope="function": the session commits *before* the response is sent. With
# FastAPI's default ("request") it would commit afterwards, and a client could
# be given an id it cannot read yet, or be redirected before its account exists.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def session_user(request: Request, session: Session) -> User | None:
    """The user of the browser's server-side session, if it is live (app/data/web_sessions.py)."""
    if "session" not in request.scope:
        return None
    found = web_sessions.find(session=session, sid=request.session.get("sid"))
    if found is None:
        return None
    request.state.web_session_id = found[1].id
    return found[0]


def current_user(
    request: Request,
    session: SessionDep,
    authorization: Annotated[str | None, Header()] = None,
    x_csrf_token: Annotated[str | None, Header()] = None,
) -> User:
    """A bearer token (scripts, `jaxjudge submit`) or the browser's session.

    Session-authenticated requests that change state must also carry the
    page's CSRF token in `X-CSRF-Token`: a cookie alone proves nothing."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and token:
        user = api_tokens.user_for(session=session, token=token.strip())
        if user is None:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Unknown, expired or revoked API token, or a disabled account.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return user
    if (found := session_user(request, session)) is not None:
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            check_csrf(request, x_csrf_token)
        return found
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "Send 'Authorization: Bearer TOKEN'; create a token with `jaxjudge tokens create NAME`.",
        headers={"WWW-Authenticate": "Bearer"},
    )


CurrentUser = Annotated[User, Depends(current_user)]
