"""Injected dependencies: database session and the authenticated user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Header, HTTPException, status
from sqlalchemy.orm import Session

from app import crud
from app.core.db import session_scope
from app.models import User


def get_session() -> Iterator[Session]:
    with session_scope() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


def current_user(
    session: SessionDep, authorization: Annotated[str | None, Header()] = None
) -> User:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Send 'Authorization: Bearer TOKEN'; create a token with `jaxjudge tokens create NAME`.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    user = crud.user_for_token(session=session, token=token.strip())
    if user is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Unknown or revoked API token.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return user


CurrentUser = Annotated[User, Depends(current_user)]
