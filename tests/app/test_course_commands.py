"""`jaxjudge courses list` and `jaxjudge grades export` against a running server, with
an instructor's personal API token: a grade export from a script, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.app.server import Server, jaxjudge, server_env

pytestmark = [pytest.mark.server]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args], env=env, capture_output=True, text=True
    )


def test_an_instructor_lists_courses_and_exports_grades_from_a_script(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    jaxjudge(env, "users", "create", "teacher", "--role", "instructor", "--password-stdin",
             stdin="long test password\n")  # fmt: skip
    token = jaxjudge(env, "tokens", "create", "teacher").stdout.strip()
    server = Server(env, 0)
    try:
        request = urllib.request.Request(
            f"{server.url}/api/courses",
            data=json.dumps({"name": "Deep learning 101"}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request) as answer:
            course = json.loads(answer.read())
        common = ["--server", server.url]
        cli_env = {**env, "JAXJUDGE_TOKEN": token}
        listed = _cli(cli_env, "courses", "list", *common)
        assert listed.returncode == 0, listed.stderr
        assert f"{course['id']}  Deep learning 101  (instructor)  join code" in listed.stdout

        exported = _cli(cli_env, "grades", "export", str(course["id"]), "--csv", *common)
        assert exported.returncode == 0, exported.stderr
        # The dashboard's file byte for byte (a BOM for spreadsheets); nothing assigned yet.
        assert exported.stdout.splitlines()[0] == "\ufefflearner"
        matrix = _cli(cli_env, "grades", "export", str(course["id"]), *common)
        assert json.loads(matrix.stdout)["course_id"] == course["id"]

        refused = _cli(env, "grades", "export", "999", "--csv", *common, "--token", token)
        assert refused.returncode == 2
        assert refused.stderr.strip() == "jaxjudge: error: the server answered 404: No course 999."
    finally:
        server.stop()
