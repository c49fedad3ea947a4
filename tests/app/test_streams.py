"""Verdict streams' caps (app/api/streams.py): the server's and each user's, taken and
given back together; through a real `jaxjudge serve`, a user past their cap is
answered 429 while another user streams on, and a closed stream makes room."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from http.client import HTTPResponse
from pathlib import Path

import pytest
from fastapi import HTTPException

from app.api import streams
from app.core.config import settings
from app.errors import TooManyError
from tests.app.server import Server, jaxjudge, server_env


def test_a_user_past_their_cap_is_refused_and_others_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "max_streams_per_user", 2)
    first = [streams.take(1), streams.take(1)]
    with pytest.raises(TooManyError, match="2 verdict streams open"):
        streams.take(1)
    other = streams.take(2)
    assert (streams.count_of(1), streams.count_of(2), streams.count()) == (2, 1, 3)
    first[0].release()
    first[0].release()  # the answer and its generator may both give it back: once counts
    again = streams.take(1)
    for slot in (first[1], other, again):
        slot.release()
    assert (streams.count_of(1), streams.count_of(2), streams.count()) == (0, 0, 0)


def test_the_server_s_cap_is_taken_with_the_user_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many requests at once (threads: the lock is a thread lock, whichever thread
    asks) never open more than either cap allows, and refusals take nothing."""
    monkeypatch.setattr(streams, "MAX_STREAMS", 10)
    monkeypatch.setattr(settings, "max_streams_per_user", 4)
    barrier = threading.Barrier(40)
    taken: list[streams.Slot] = []
    refused: list[int] = []
    lock = threading.Lock()

    def ask(user_id: int) -> None:
        barrier.wait()
        try:
            slot = streams.take(user_id)
        except (TooManyError, HTTPException) as error:
            with lock:
                refused.append(429 if isinstance(error, TooManyError) else error.status_code)
            return
        with lock:
            taken.append(slot)

    threads = [threading.Thread(target=ask, args=(n % 5,)) for n in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(taken) == 10 == streams.count() and len(refused) == 30
    assert all(streams.count_of(user) <= 4 for user in range(5))
    for slot in taken:
        slot.release()
    assert streams.count() == 0 and all(streams.count_of(user) == 0 for user in range(5))


def _token(env: dict[str, str], name: str) -> str:
    created = jaxjudge(
        env,
        "users",
        "create",
        name,
        "--role",
        "learner",
        "--password-stdin",
        stdin="correct horse\n",
    )
    assert created.returncode == 0, created.stderr
    issued = jaxjudge(env, "tokens", "create", name)
    assert issued.returncode == 0, issued.stderr
    return issued.stdout.strip()


def _submit(server: Server, token: str) -> int:
    request = urllib.request.Request(
        f"{server.url}/api/submissions",
        data=json.dumps({"problem": "scan-microbatched-grads", "code": "x = 1"}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return int(json.loads(answer.read())["id"])


def _stream(server: Server, token: str, submission_id: int) -> HTTPResponse:
    """An open stream, its first event read (the submission waits: no worker grades it)."""
    request = urllib.request.Request(
        f"{server.url}/api/submissions/{submission_id}/events",
        headers={"Authorization": f"Bearer {token}"},
    )
    opened: HTTPResponse = urllib.request.urlopen(request, timeout=30)
    assert opened.readline().startswith(b"event: progress")
    return opened


def _refusal(server: Server, token: str, submission_id: int) -> tuple[int, str]:
    """A stream refused: its status and its message."""
    with pytest.raises(urllib.error.HTTPError) as refused:
        _stream(server, token, submission_id).close()
    with refused.value:
        return refused.value.code, json.loads(refused.value.read())["detail"]


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.sandbox  # the server prepares the bank at start (trusted runs)
def test_a_served_user_past_their_cap_gets_429_until_one_of_theirs_closes(
    tmp_path: Path,
) -> None:
    env = {**server_env(tmp_path), "JAXJUDGE_MAX_STREAMS_PER_USER": "3"}
    ada, grace = _token(env, "ada"), _token(env, "grace")
    server = Server(env, workers=0)  # submissions wait: their streams stay open
    try:
        mine, theirs = _submit(server, ada), _submit(server, grace)
        open_streams = [_stream(server, ada, mine) for _ in range(3)]
        code, detail = _refusal(server, ada, mine)
        assert code == 429 and "3 verdict streams open" in detail
        graces = _stream(server, grace, theirs)  # another user is not held up by ada's cap
        open_streams.pop().close()
        deadline = time.monotonic() + 10  # the server sees the disconnect, then gives it back
        reopened: HTTPResponse | None = None
        while reopened is None and time.monotonic() < deadline:
            try:
                reopened = _stream(server, ada, mine)
            except urllib.error.HTTPError as refusal:
                refusal.close()
                time.sleep(0.1)
        assert reopened is not None, "closing a stream never made room for another"
        open_streams.append(reopened)
        assert _refusal(server, ada, mine)[0] == 429  # and the cap holds again
        for stream in [*open_streams, graces]:
            stream.close()
    finally:
        server.stop()
