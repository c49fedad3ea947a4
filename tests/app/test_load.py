"""Fifty token clients polling a submission and fifty listing problems, at once, through
a real `jaxjudge serve`: no 5xx and no dropped connection (a bounded run; `make bench`
runs a longer one and prints its latencies)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from bench.http_load import Client, run
from tests.app.server import Server, jaxjudge, server_env

# Each server prepares the problems at start (trusted runs in grading children).
pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.sandbox]


def test_a_hundred_concurrent_token_clients_get_no_errors(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    assert (
        jaxjudge(
            env, "users", "create", "ada", "--password-stdin", stdin="long test password\n"
        ).returncode
        == 0
    )
    tokens = [jaxjudge(env, "tokens", "create", "ada").stdout.strip() for _ in range(2)]
    server = Server(env, 0)
    try:
        request = urllib.request.Request(
            f"{server.url}/api/submissions",
            data=json.dumps(
                {"problem": "scan-microbatched-grads", "code": "x", "mode": "run"}
            ).encode(),
            headers={"Authorization": f"Bearer {tokens[0]}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            submission = json.loads(answer.read())["id"]
        clients = [
            Client(f"/api/submissions/{submission}", {"Authorization": f"Bearer {tokens[0]}"})
        ] * 50
        clients += [Client("/api/problems", {"Authorization": f"Bearer {tokens[1]}"})] * 50
        result = run(server.url, clients, seconds=6)
    finally:
        server.stop()
    print(result.summary())
    assert result.requests > 200
    assert result.errors == 0, result.summary()
    assert set(result.statuses) == {200}, result.summary()
