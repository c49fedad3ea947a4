"""Injected dependencies: database session and the authenticated user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request, status
from sqlalchemy.orm import Session

from app import crud
from app.core.db import session_scope
from app.core.sessions import check_csrf
from app.models import User


def get_session() -> Iterator[Session]:
    with session_scope() as session:
        yield session


# scope="function": the session commits *before* the response is sent. With
# FastAPI's default ("request") it would commit afterwards, and a client could
# be given an id it cannot read yet, or be redirected before its account exists.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


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
        user = crud.user_for_token(session=session, token=token.strip())
        if user is None:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Unknown or revoked API token.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return user
    user_id = request.session.get("user_id") if "session" in request.scope else None
    if isinstance(user_id, int) and (user := session.get(User, user_id)) is not None:
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            check_csrf(request, x_csrf_token)
        return user
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "Send 'Authorization: Bearer TOKEN'; create a token with `jaxjudge tokens create NAME`.",
        headers={"WWW-Authenticate": "Bearer"},
    )


CurrentUser = Annotated[User, Depends(current_user)]
