"""A server killed with SIGKILL in the middle of a burst loses nothing, and once it is
restarted every submission is graded exactly once, at once: a starting server frees
the leases its dead self held instead of waiting for them to expire.

The leases here are 120 s long on purpose: without that release, the submissions
the dead server held would wait two minutes, far past this test's deadline. How long
the whole burst takes after the restart depends on the machine's free cores (18 s
on an idle 2-core machine, docs/operations.md); the test prints it."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT
from tests.app.server import Server, jaxjudge, server_env
from tests.conftest import lean_copy

# Each server prepares the problems at start (trusted runs in grading children).
pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.sandbox]

SLUG = "scan-microbatched-grads"
REFERENCE = (PROJECT_ROOT / "reference_solutions" / f"{SLUG}.py").read_text()


def call(
    server: Server, token: str, path: str, body: dict[str, str] | None = None
) -> dict[str, object]:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode() if body else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        result: dict[str, object] = json.loads(answer.read())
        return result


def test_a_killed_server_grades_everything_exactly_once_soon_after_restart(tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    lean_copy(SLUG, bank)
    env = {
        **server_env(tmp_path),
        "JAXJUDGE_CONTENT_DIR": str(bank),
        "JAXJUDGE_LEASE_SECONDS": "120",
    }
    prepared = jaxjudge(env, "prepare", SLUG)  # as a deployment does before serving
    assert prepared.returncode == 0, prepared.stderr
    # A lean copy is not the bank's proven problem: it goes live by the explicit override.
    for command in (("sync",), ("publish", SLUG)):
        done = jaxjudge(env, *command)
        assert done.returncode == 0, done.stderr
    tokens = []
    for name in ("ada", "bob", "cy", "dee"):
        made = jaxjudge(
            env, "users", "create", name, "--password-stdin", stdin="long test password\n"
        )
        assert made.returncode == 0, made.stderr
        tokens.append(jaxjudge(env, "tokens", "create", name).stdout.strip())

    first = Server(env, 2, log=tmp_path / "first.log")
    ids = [
        int(str(call(first, token, "/api/submissions", {"problem": SLUG, "code": REFERENCE})["id"]))
        for _ in range(5)
        for token in tokens
    ]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # kill it while it grades
        states = [call(first, tokens[0], f"/api/submissions/{ids[0]}")["status"]]
        if "running" in states or "done" in states:
            break
        time.sleep(0.2)
    time.sleep(1.0)
    first.kill()

    restarted_at = time.monotonic()
    second = Server(env, 2, log=tmp_path / "second.log")
    try:
        owners = dict(zip(ids, [t for _ in range(5) for t in tokens], strict=True))
        pending = set(ids)
        while pending and time.monotonic() < restarted_at + 100:
            pending = {
                i
                for i in pending
                if call(second, owners[i], f"/api/submissions/{i}")["status"] != "done"
            }
            time.sleep(0.3)
        took = time.monotonic() - restarted_at
        verdicts = {i: call(second, owners[i], f"/api/submissions/{i}")["verdict"] for i in ids}
    finally:
        second.stop()
    print(f"all 20 graded {took:.1f} s after the restart")
    assert pending == set(), "submissions the dead server held waited for their leases"
    released = re.search(r"released (\d+) submission", (tmp_path / "second.log").read_text())
    assert released and int(released[1]) >= 1, "the restart freed no lease of its dead self"
    assert set(verdicts.values()) == {"accepted"}
    graded = Counter(
        int(found)
        for log in ("first.log", "second.log")
        for found in re.findall(r"submission (\d+): \w+", (tmp_path / log).read_text())
    )
    assert graded == Counter(ids), "each submission recorded exactly once, by one of the two"
