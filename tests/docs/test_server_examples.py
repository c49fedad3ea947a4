"""The docs' examples that talk to a server, run by bash as they are written against
`jaxjudge serve` started by docs/deployment.md's own command line: the scripting
quickstart, the light client's commands, a notebook sent with curl, an instructor's
course commands with the extensions CSV of docs/instructors.md. Placeholders (the
example's server address, a course's id, a submission's id) are replaced by name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

from app.web import notebook_example
from grader.config import PROJECT_ROOT
from tests.app.server import bank_prepared, free_port
from tests.docs.blocks import block, checkout_like, run_shell, shell_env, substituted

pytestmark = [
    pytest.mark.server,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.xdist_group("doc-examples-server"),
]

SERVE = block("docs/deployment.md", "JAXJUDGE_SECURE_COOKIES=true jaxjudge serve")
QUICKSTART = block("docs/api.md", "echo 'a long password' | .venv/bin/jaxjudge users create ada")
CLIENT = block("docs/api.md", "export JAXJUDGE_SERVER=https://judge.example.org")
NOTEBOOK_BY_CURL = block("docs/api.md", 'curl -H "Authorization: Bearer $JAXJUDGE_TOKEN" -H "Idem')
COURSE_COMMANDS = block("docs/api.md", "jaxjudge courses list")
EXTENSIONS_CSV = block("docs/instructors.md", "user,problem,due_at")
RUN = [SERVE, QUICKSTART, CLIENT, NOTEBOOK_BY_CURL, COURSE_COMMANDS, EXTENSIONS_CSV]

SLUG = "scan-microbatched-grads"  # the examples' problem
SOLUTION = (PROJECT_ROOT / "reference_solutions" / f"{SLUG}.py").read_text()
EXAMPLE_SERVER = "http://127.0.0.1:8000"
# The course the examples script: the client's notebook assignment ("Week 1") and the
# problem docs/instructors.md's extensions CSV names.
ASSIGNED = [(SLUG, "Week 1"), ("nnx-grad-accumulation", None)]


@dataclass
class Site:
    url: str
    folder: Path
    env: dict[str, str]  # the shell's: `jaxjudge` on the PATH, the server's database

    def api(self, method: str, path: str, token: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read()!r}") from None

    def shell(self, text: str, **more_env: str) -> list[Any]:
        return run_shell(text, cwd=self.folder, env={**self.env, **more_env})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    bank_prepared()  # the bank's trusted runs in the cache, not behind this server
    folder = checkout_like(tmp_path_factory.mktemp("docs-site"))
    env = shell_env(folder)
    port = free_port()
    line = substituted(SERVE.text, {"\\\n   ": "", "--port 8000": f"--port {port}"})
    log = folder / "server.log"
    with log.open("w") as errors:
        server = subprocess.Popen(
            ["bash", "-c", line], cwd=folder, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=errors,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1):
                break
        except OSError:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the documented serve command did not serve"
            time.sleep(0.3)
    yield Site(url, folder, env)
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=60)


def _token(site: Site, name: str, role: str) -> str:
    """A new token of user ``name``, made first if need be (the quickstart makes ada)."""
    _create, made = site.shell(
        f"echo 'a long password' | jaxjudge users create {name} --role {role} --password-stdin\n"
        f"jaxjudge tokens create {name}"
    )
    assert made.returncode == 0, made
    return str(made.stdout.strip())


def _notebook(path: Path) -> None:
    cells = [nbformat.v4.new_markdown_cell("# Week 1"), nbformat.v4.new_code_cell(SOLUTION)]  # type: ignore[no-untyped-call]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)  # type: ignore[no-untyped-call]


def test_the_scripting_quickstart_submits_and_lists(site: Site) -> None:
    (site.folder / "my_solution.py").write_text(SOLUTION)
    create, token, submit, listing = site.shell(
        substituted(QUICKSTART.text, {EXAMPLE_SERVER: site.url}), JAXJUDGE_SERVER=site.url
    )
    assert [r.returncode for r in (create, token, submit, listing)] == [0, 0, 0, 0], (
        create, token, submit, listing,
    )  # fmt: skip
    assert submit.stdout.startswith(f"{SLUG}: Accepted"), submit.stdout
    slugs = {p["slug"] for p in json.loads(listing.stdout)["data"]}
    assert SLUG in slugs and "stable-logsumexp" in slugs


def test_the_client_and_curl_examples_and_an_instructors_commands(site: Site) -> None:
    teacher = _token(site, "teacher", "instructor")
    learner = _token(site, "ada", "learner")
    course = site.api("POST", "/api/courses", teacher, {"name": "Deep learning 101"})
    for problem, notebook_name in ASSIGNED:
        site.api("PUT", f"/api/courses/{course['id']}/assignments", teacher,
                 {"problem": problem, "notebook": notebook_name})  # fmt: skip
    site.api("POST", "/api/courses/join", learner, {"code": course["join_code"]})
    site.api("POST", "/api/courses/join", _token(site, "bob", "learner"),
             {"code": course["join_code"]})  # fmt: skip
    _notebook(site.folder / "work.ipynb")
    (site.folder / "solution.py").write_text(SOLUTION)
    learner_env = {"JAXJUDGE_SERVER": site.url, "JAXJUDGE_TOKEN": learner}

    (sent,) = site.shell(NOTEBOOK_BY_CURL.text, **learner_env)
    assert sent.returncode == 0, sent
    made = json.loads(sent.stdout)
    assert made["problem"] == SLUG and made["cells"] == [2] and made["missing"] == []

    placeholders = {
        "https://judge.example.org": site.url,
        "JAXJUDGE_TOKEN=...": f"JAXJUDGE_TOKEN={learner}",
        "--course 3": f"--course {course['id']}",
        "status 42": f"status {made['id']}",
    }
    ran = site.shell(substituted(CLIENT.text, placeholders))
    _export, submit, run, notebook, course_notebook, status, problems = ran
    assert [r.returncode for r in ran] == [0] * 7, ran
    assert submit.stdout.startswith(f"{SLUG}: Accepted"), submit
    assert "(sample)" in run.stdout and "(hidden)" not in run.stdout, run
    assert f"{SLUG}: Accepted" in notebook.stdout, notebook
    assert f"{SLUG}: Accepted" in course_notebook.stdout, course_notebook
    assert status.stdout.startswith(f"{SLUG}: Accepted"), status
    assert any(line.split()[:2] == [SLUG, "solved"] for line in problems.stdout.splitlines()), (
        problems.stdout
    )
    # The account page's terminal command, with the page's own address filled in.
    page_command = substituted(
        notebook_example.terminal_command(site.url),
        {"JAXJUDGE_TOKEN=...": f"JAXJUDGE_TOKEN={learner}", " SLUG ": f" {SLUG} "},
    )
    (from_page,) = site.shell(page_command)
    assert from_page.stdout.startswith(f"{SLUG}: Accepted"), from_page

    # The instructor sets a due date before the examples' extensions (one now past,
    # confirmed), then runs the scripts.
    for problem, notebook_name in ASSIGNED:
        site.api("PUT", f"/api/courses/{course['id']}/assignments", teacher,
                 {"problem": problem, "notebook": notebook_name, "opens_at": "2026-11-01T00:00:00",
                  "due_at": "2026-12-01T00:00:00", "confirm_past_due": True})  # fmt: skip
    (site.folder / "extensions.csv").write_text(EXTENSIONS_CSV.text)
    commands = substituted(COURSE_COMMANDS.text, {" 3 ": f" {course['id']} "})
    ran = site.shell(commands, JAXJUDGE_SERVER=site.url, JAXJUDGE_TOKEN=teacher)
    listed, _grades_csv, submissions, matrix, _canvas, upload, grant = ran  # files: below
    assert [r.returncode for r in ran] == [0] * 7, ran
    assert f"{course['id']}  Deep learning 101  (instructor)" in listed.stdout
    assert (site.folder / "grades.csv").read_text().startswith("\ufeffuser,display_name,")
    assert SOLUTION.splitlines()[0] in submissions.stdout  # every submit, with its code
    assert json.loads(matrix.stdout)["course_id"] == course["id"]
    assert (site.folder / "c.csv").read_text().startswith("\ufeffStudent,ID,")
    assert "granted 2 extension(s)" in upload.stdout, upload
    assert grant.stdout.startswith(f"granted: {SLUG} due 2026-12-08T23:59:00 UTC"), grant
    granted = site.api("GET", f"/api/courses/{course['id']}/extensions", teacher)["data"]
    assert sorted(e["problem"] for e in granted) == ["nnx-grad-accumulation"] * 2 + [SLUG]
    assert len({e["user_id"] for e in granted}) == 2  # ada twice, bob once
