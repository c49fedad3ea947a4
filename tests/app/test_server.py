"""The server as a user runs it: `jaxjudge serve`, the CLI, a restart."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT
from tests.app.server import Server, jaxjudge, server_env

# Each server prepares the problems at start (trusted runs in grading children).
pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.sandbox]

REFERENCE = PROJECT_ROOT / "reference_solutions" / "scan-microbatched-grads.py"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return server_env(tmp_path)


@pytest.fixture
def token(env: dict[str, str]) -> str:
    created = jaxjudge(
        env,
        "users",
        "create",
        "ada",
        "--role",
        "learner",
        "--password-stdin",
        stdin="correct horse\n",
    )
    assert created.returncode == 0, created.stderr
    issued = jaxjudge(env, "tokens", "create", "ada")
    assert issued.returncode == 0, issued.stderr
    return issued.stdout.strip()


@pytest.fixture
def server(env: dict[str, str], token: str) -> Iterator[Server]:
    running = Server(env, workers=1)
    yield running
    running.stop()


def api(
    server: Server, token: str, path: str, body: dict[str, str] | None = None
) -> dict[str, object]:
    request = urllib.request.Request(
        server.url + path, data=json.dumps(body).encode() if body else None
    )
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, object] = json.loads(response.read())
        return answer


def test_submit_from_the_command_line(server: Server, token: str, env: dict[str, str]) -> None:
    accepted = jaxjudge(
        env,
        "submit",
        "--server",
        server.url,
        "--token",
        token,
        "scan-microbatched-grads",
        str(REFERENCE),
    )
    assert accepted.returncode == 0, accepted.stderr
    assert "scan-microbatched-grads: Accepted" in accepted.stdout
    wrong = (
        PROJECT_ROOT / "problems" / "scan-microbatched-grads" / "mistakes" / "averaged_chunks.py"
    )
    rejected = jaxjudge(
        env,
        "submit",
        "--server",
        server.url,
        "--token",
        token,
        "--json",
        "scan-microbatched-grads",
        str(wrong),
    )
    assert rejected.returncode == 1
    report = json.loads(rejected.stdout)
    assert report["verdict"] == "wrong_answer"
    assert report["diagnosis"].startswith("You divided the accumulated gradient")
    refused = jaxjudge(
        env,
        "submit",
        "--server",
        server.url,
        "--token",
        "jj_wrong",
        "scan-microbatched-grads",
        "-",  # the code from standard input
        stdin=REFERENCE.read_text(),
    )
    assert refused.returncode == 2
    assert "401" in refused.stderr and "/account" in refused.stderr  # where to get a token


def test_a_queued_submission_survives_a_restart(env: dict[str, str], token: str) -> None:
    idle = Server(env, workers=0)  # accepts submissions, grades none
    submission = api(
        idle,
        token,
        "/api/submissions",
        {"problem": "scan-microbatched-grads", "code": REFERENCE.read_text()},
    )
    assert api(idle, token, f"/api/submissions/{submission['id']}")["status"] == "queued"
    idle.stop()

    grading = Server(env, workers=1)
    try:
        deadline = time.monotonic() + 120
        state: dict[str, object] = {}
        while time.monotonic() < deadline:
            state = api(grading, token, f"/api/submissions/{submission['id']}")
            if state["status"] == "done":
                break
            time.sleep(0.5)
        assert state["status"] == "done"
        assert state["verdict"] == "accepted"
    finally:
        grading.stop()


def test_a_verdict_streams_its_stages_then_arrives(server: Server, token: str) -> None:
    """GET /api/submissions/{id}/events: progress events while it waits, then the
    verdict, the same one a read answers; someone else's submission does not exist."""
    created = api(server, token, "/api/submissions",
                  {"problem": "scan-microbatched-grads", "code": REFERENCE.read_text()})  # fmt: skip
    events: list[tuple[str, dict[str, object]]] = []
    request = urllib.request.Request(
        f"{server.url}/api/submissions/{created['id']}/events",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=120) as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, json.loads(line.removeprefix("data: "))))
                if kind == "done":
                    break
    kinds = [kind for kind, _state in events]
    assert kinds[-1] == "done" and set(kinds[:-1]) <= {"progress"}
    assert all(state["status"] in ("queued", "running") for _kind, state in events[:-1])
    assert events[-1][1] == api(server, token, f"/api/submissions/{created['id']}")
    assert events[-1][1]["verdict"] == "accepted"
    missing = urllib.request.Request(
        f"{server.url}/api/submissions/{int(str(created['id'])) + 1000}/events",
        headers={"Authorization": f"Bearer {token}"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(missing, timeout=30)
    refused.value.close()
    assert refused.value.code == 404


def verdict_of(server: Server, token: str, body: dict[str, str]) -> dict[str, object]:
    created = api(server, token, "/api/submissions", body)
    deadline = time.monotonic() + 300  # a first start runs the trusted runs first
    while time.monotonic() < deadline:
        state = api(server, token, f"/api/submissions/{created['id']}")
        if state["status"] == "done":
            return state
        time.sleep(0.1)
    raise AssertionError(f"no verdict for {created['id']}")


def test_run_then_submit_grades_the_submission_in_the_runs_child(
    server: Server, token: str, env: dict[str, str]
) -> None:
    """The rhythm learners have: Run until the samples pass, then Submit the same code.
    The submission is graded on the hidden cases the run's child went on into, and its
    draw is the one recorded (a regrade reproduces it); edited code is graded afresh."""
    code = REFERENCE.read_text()
    ran = verdict_of(
        server, token, {"problem": "scan-microbatched-grads", "code": code, "mode": "run"}
    )
    assert ran["verdict"] == "accepted"
    submitted = verdict_of(server, token, {"problem": "scan-microbatched-grads", "code": code})
    edited = verdict_of(
        server, token, {"problem": "scan-microbatched-grads", "code": code + "\n# edited\n"}
    )
    assert submitted["verdict"] == edited["verdict"] == "accepted"
    database = env["JAXJUDGE_DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(database) as connection:
        rows = {
            row[0]: (json.loads(row[1]), row[2])
            for row in connection.execute(
                "SELECT id, result_json, hidden_draw FROM submissions WHERE id IN (?, ?)",
                (submitted["id"], edited["id"]),
            )
        }
    report, draw = rows[submitted["id"]]
    assert report["continued_from_run"] is True and report["variant"] == draw
    assert rows[edited["id"]][0]["continued_from_run"] is False
