"""The JSON API's caller: a bearer token or the browser's session (with its CSRF token).

A credential never outlives or outranks the one that made it: an API token cannot
make another (``BrowserUser``), so a 1-day token cannot leave a token that never
expires behind it. Tokens are made by a person signed in: the account page, or
`/api/tokens` from that browser's session."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Request, status

from app.core.request_db import SessionDep
from app.core.sessions import browser_session_id, check_csrf
from app.data import api_tokens, web_sessions
from app.errors import ForbiddenError
from app.models import User

# The bearer header, declared where a route reads it (OpenAPI lists it for that route).
Authorization = Annotated[str | None, Header()]


def _bearer_token(authorization: str | None) -> str | None:
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def current_user(
    request: Request,
    session: SessionDep,
    authorization: Authorization = None,
    x_csrf_token: Annotated[str | None, Header()] = None,
) -> User:
    """A bearer token (scripts, `jaxjudge submit`) or the browser's session.

    Session-authenticated requests that change state must also carry the
    page's CSRF token in `X-CSRF-Token`: a cookie alone proves nothing."""
    if (token := _bearer_token(authorization)) is not None:
        user = api_tokens.user_for(session=session, token=token)
        if user is None:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Unknown, expired or revoked API token, or a disabled account.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return user
    found = web_sessions.find(session=session, sid=browser_session_id(request))
    if found is not None:
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            check_csrf(request, x_csrf_token)
        return found[0]
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        "Send 'Authorization: Bearer TOKEN'; create a token with `jaxjudge tokens create NAME`.",
        headers={"WWW-Authenticate": "Bearer"},
    )


CurrentUser = Annotated[User, Depends(current_user)]


def browser_user(user: CurrentUser, authorization: Authorization = None) -> User:
    """The caller, signed in through a browser (password or LMS launch): what makes
    a credential. A request made with an API token is refused (403)."""
    if _bearer_token(authorization) is not None:
        raise ForbiddenError(
            "An API token cannot create API tokens: create them on your account page"
            " (/account) after signing in."
        )
    return user


BrowserUser = Annotated[User, Depends(browser_user)]
