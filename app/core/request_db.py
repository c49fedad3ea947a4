"""A request's database session: one per request, committed before the answer is sent.
The API and the pages both declare it (``session: SessionDep``).

It opens on the event loop, where opening costs nothing (the connection is taken at the
first query, in the thread that runs it), and ends in one thread hop: a hop costs
0.1-0.2 ms on a 2-core machine, a good part of a hot read's time (bench/hot_reads.py).
The end is shielded, so a client that goes away mid-request still gets its session
rolled back and its connection returned to the pool at once."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Annotated

from anyio import CancelScope
from anyio.to_thread import run_sync
from fastapi import Depends
from sqlalchemy.orm import Session

from app.core.db import end_session, new_session


async def get_session() -> AsyncGenerator[Session]:
    session = new_session()
    try:
        yield session
    except BaseException:
        with CancelScope(shield=True):
            await run_sync(lambda: end_session(session, commit=False))
        raise
    with CancelScope(shield=True):
        await run_sync(lambda: end_session(session, commit=True))


# scope="function": the session commits *before* the response is sent. With
# FastAPI's default ("request") it would commit afterwards, and a client could
# be given an id it cannot read yet, or be redirected before its account exists.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]
