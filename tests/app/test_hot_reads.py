"""Hot reads run on their own few threads, in one hop that authenticates, reads and
ends its session (app/api/hot_reads.py)."""

from __future__ import annotations

import threading
import time

import anyio
import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from starlette.requests import Request

from app.api import hot_reads
from app.core import db
from app.core.config import settings
from app.errors import NotFoundError
from app.models import User
from app.schemas.learners import TracksPublic
from tests.app.conftest import token_for


def _request(headers: dict[str, str]) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "GET", "path": "/api/tracks", "headers": raw})


def _most_at_once(headers: dict[str, str], reads: int) -> int:
    """How many of ``reads`` concurrent hot reads ran at once, while every default
    (request) thread is taken: they must not need one."""
    lock, running, most = threading.Lock(), [0], [0]

    def read(_session: Session, user: User) -> TracksPublic:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)  # long enough for every other read to start, were it allowed
        with lock:
            running[0] -= 1
        assert user.name == "reader"
        return TracksPublic(data=[])

    async def main() -> None:
        request_threads = anyio.to_thread.current_default_thread_limiter()
        request_threads.total_tokens = 1
        await request_threads.acquire()  # every request thread busy
        try:  # reads that needed a request thread would wait for ever: fail instead
            with anyio.fail_after(10):
                async with anyio.create_task_group() as group:
                    for _ in range(reads):
                        group.start_soon(
                            hot_reads.answer, _request(headers), headers["Authorization"], read
                        )
        finally:
            request_threads.release()

    anyio.run(main)
    return most[0]


@pytest.mark.parametrize("threads", [1, 2])
def test_hot_reads_run_on_their_own_threads_and_no_more_at_once(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    monkeypatch.setattr(settings, "read_threads", threads)  # unset: 1 on SQLite, 4 on PostgreSQL
    assert _most_at_once(token_for("reader"), reads=4) == threads


def test_a_hot_read_is_the_routes_answer_and_refuses_as_the_route_does(
    client: TestClient,
) -> None:
    headers = token_for("learner")
    tracks = client.get("/api/tracks", headers=headers)
    assert tracks.status_code == 200
    assert tracks.headers["content-type"] == "application/json"
    assert TracksPublic.model_validate(tracks.json()).data  # the bank's tracks
    assert client.get("/api/problems", headers=headers).json()["count"] > 0
    refused = client.get("/api/tracks", headers={"Authorization": "Bearer nope"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    missing = client.get("/api/submissions/999999", headers=headers)
    assert (missing.status_code, missing.json()) == (404, {"detail": "No submission 999999."})


def test_a_failed_read_rolls_its_session_back_and_raises_its_error(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended: list[bool] = []
    end = db.end_session

    def recorded(session: Session, *, commit: bool) -> None:
        ended.append(commit)
        end(session, commit=commit)

    monkeypatch.setattr(hot_reads, "end_session", recorded)

    def read(_session: Session, _user: User) -> TracksPublic:
        raise NotFoundError("gone")

    async def main() -> None:
        headers = token_for("reader")
        await hot_reads.answer(_request(headers), headers["Authorization"], read)

    with pytest.raises(NotFoundError, match="gone"):
        anyio.run(main)
    assert ended == [False]
    other = token_for("other")
    anyio.run(
        hot_reads.answer,
        _request(other),
        other["Authorization"],
        lambda _s, _u: TracksPublic(data=[]),
    )
    assert ended == [False, True]


def test_the_read_threads_default_to_one_on_sqlite_and_four_on_postgresql(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "read_threads", None)
    monkeypatch.setattr(settings, "database_url", "sqlite:////tmp/any.db")
    assert settings.hot_read_threads == 1
    monkeypatch.setattr(settings, "database_url", "postgresql+psycopg://u@db/jaxjudge")
    assert settings.hot_read_threads == 4
    monkeypatch.setattr(settings, "read_threads", 3)
    assert settings.hot_read_threads == 3
