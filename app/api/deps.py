"""The JSON API's caller: a bearer token or the browser's session (with its CSRF token)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request, status

from app.core.sessions import check_csrf
from app.data import api_tokens
from app.dependencies import SessionDep, session_user
from app.models import User


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
