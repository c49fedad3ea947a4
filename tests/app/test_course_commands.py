"""`jaxjudge courses list`, `jaxjudge grades export` and `jaxjudge extensions` against a
running server, with an instructor's personal API token: a grade export and bulk
extensions from a script, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.app.server import Server, jaxjudge, server_env

# sandbox: a server is started once the bank's trusted runs are in (tests/app/server.py)
pytestmark = [pytest.mark.server, pytest.mark.sandbox]


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.commands.cli", *args], env=env, capture_output=True, text=True
    )


@pytest.mark.slow  # about 11 s on 2 cores: each command is a fresh process
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
        assert exported.stdout.splitlines()[0] == (
            "\ufeffuser,display_name,email,student_id,total (of 0)"
        )
        matrix = _cli(cli_env, "grades", "export", str(course["id"]), *common)
        assert json.loads(matrix.stdout)["course_id"] == course["id"]

        # Bulk extensions from a CSV: a bad row changes nothing, then all are granted.
        jaxjudge(env, "users", "create", "ada", "--password-stdin", stdin="long test password\n")
        learner = jaxjudge(env, "tokens", "create", "ada").stdout.strip()
        for path, body, bearer, method in (
            ("/api/courses/join", {"code": course["join_code"]}, learner, "POST"),
            (f"/api/courses/{course['id']}/assignments",
             {"problem": "nnx-grad-accumulation", "due_at": "2031-01-01T00:00:00"}, token, "PUT"),
        ):  # fmt: skip
            call = urllib.request.Request(
                f"{server.url}{path}", data=json.dumps(body).encode(), method=method,
                headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"},
            )  # fmt: skip
            urllib.request.urlopen(call).close()
        sheet = tmp_path / "extensions.csv"
        sheet.write_text("user,problem,due_at\nada,nnx-grad-accumulation,2031-01-08T00:00\n"
                         "zed,nnx-grad-accumulation,2031-01-08T00:00\n")  # fmt: skip
        bad = _cli(cli_env, "extensions", "upload", str(course["id"]), str(sheet), *common)
        assert bad.returncode == 2 and "Nothing was changed" in bad.stderr and "row 3" in bad.stderr
        sheet.write_text("user,problem,due_at\nada,nnx-grad-accumulation,2031-01-08T00:00\n")
        good = _cli(cli_env, "extensions", "upload", str(course["id"]), str(sheet), *common)
        assert good.returncode == 0 and "granted 1 extension(s)" in good.stdout, good.stderr
        listed = _cli(cli_env, "extensions", "list", str(course["id"]), *common)
        assert "nnx-grad-accumulation  learner" in listed.stdout and "2031-01-08" in listed.stdout
        canvas = _cli(cli_env, "grades", "export", str(course["id"]), "--layout", "canvas", *common)
        assert canvas.stdout.startswith("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,")

        refused = _cli(env, "grades", "export", "999", "--csv", *common, "--token", token)
        assert refused.returncode == 2
        assert refused.stderr.strip() == "jaxjudge: error: the server answered 404: No course 999."
    finally:
        server.stop()
