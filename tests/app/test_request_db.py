"""A request's session (``SessionDep``): committed when the route returns, rolled back
when it fails, and its connection back in the pool even when the request is cancelled
mid-route (a client that went away): the session's end is shielded from the
cancellation."""

from __future__ import annotations

import anyio
import pytest
from sqlalchemy import func, select, text

from app.core.db import engine, session_scope
from app.core.request_db import get_session
from app.data import accounts
from app.models import User


def _users() -> int:
    with session_scope() as session:
        return session.scalar(select(func.count()).select_from(User)) or 0


async def _request(outcome: str) -> None:
    """What FastAPI does with the dependency around a route that returns, raises, or is
    cancelled at an await (anyio's cancellation, as Starlette's when the client goes:
    every later await in the scope is cancelled too, unless shielded)."""
    with anyio.CancelScope() as scope:
        sessions = get_session()
        session = await anext(sessions)
        accounts.create_user(session=session, name="grace", password="long enough password")
        session.execute(text("SELECT 1"))  # a connection is taken
        if outcome == "returns":
            with pytest.raises(StopAsyncIteration):
                await anext(sessions)
            return
        if outcome == "raises":
            with pytest.raises(ValueError, match="the route failed"):
                await sessions.athrow(ValueError("the route failed"))
            return
        scope.cancel()
        try:
            await anyio.sleep(5)  # the route's await, where the cancellation lands
        except anyio.get_cancelled_exc_class() as cancelled:
            with pytest.raises(anyio.get_cancelled_exc_class()):
                await sessions.athrow(cancelled)
            raise
    assert scope.cancelled_caught


def test_a_request_that_returns_is_committed(sqlite_database: str) -> None:
    before = _users()
    anyio.run(_request, "returns")
    assert _users() == before + 1
    assert engine().pool.checkedout() == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("outcome", ["raises", "cancelled"])
def test_a_failed_or_cancelled_request_is_rolled_back_and_gives_its_connection_back(
    sqlite_database: str, outcome: str
) -> None:
    before = _users()
    anyio.run(_request, outcome)
    assert _users() == before
    assert engine().pool.checkedout() == 0  # type: ignore[attr-defined]
