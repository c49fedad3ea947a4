"""Request dependencies the JSON API and the pages share: the request's database session
and the browser's signed-in user. Neither side imports the other; both import this."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import web_sessions
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
