"""A request's database session: one per request, committed before the answer is sent.
The API and the pages both declare it (``session: SessionDep``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends
from sqlalchemy.orm import Session

from app.core.db import session_scope


def get_session() -> Iterator[Session]:
    with session_scope() as session:
        yield session


# scope="function": the session commits *before* the response is sent. With
# FastAPI's default ("request") it would commit afterwards, and a client could
# be given an id it cannot read yet, or be redirected before its account exists.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
