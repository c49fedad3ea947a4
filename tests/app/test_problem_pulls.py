"""A course linked to a git repository of problem folders (app/data/problem_repos.py,
app/grading/problem_pulls.py), against a real git server on 127.0.0.1 (git's own
smart-HTTP backend: tests/app/git_server.py). Plain http is allowed here by the test's
setting (JAXJUDGE_PROBLEM_REPO_SCHEMES); the default allows https only."""

from __future__ import annotations

import hashlib
import hmac
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import settings
from app.core.db import session_scope
from app.data import accounts, catalog, courses, problem_folders, problem_repos
from app.grading import problem_pulls
from app.models import CourseProblemRepo
from grader.config import PROJECT_ROOT
from grader.problems import folders
from tests.app.conftest import in_process_client, sign_in
from tests.app.git_server import git_http_server
from tests.conftest import copy_problem

# A pull forks git from a thread of this process. When an earlier test on the same
# pytest worker started JAX in process, JAX's fork hook warns at every fork, and the
# suite's "error" filter turned that into an error inside the hook (an unraisable
# exception), failing these tests on the full run only. git is exec'd at once: the
# warning's deadlock needs the child to run Python, which it never does.
pytestmark = pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")

NAME = "stable-logsumexp"


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(cwd)},
    )


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A bare repository with one problem on main, served over HTTP; and its work tree."""
    served = tmp_path / "served"
    served.mkdir()
    git("init", "--quiet", "--bare", "-b", "main", "problems.git", cwd=served)
    work = tmp_path / "work"
    copy_problem(NAME, work)
    (work / "README.md").write_text("Our course's problems.\n")
    git("init", "--quiet", "-b", "main", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "one problem", cwd=work)
    git("push", "--quiet", str(served / "problems.git"), "main", cwd=work)
    with git_http_server(served) as base:
        yield f"{base}/problems.git", work


@pytest.fixture
def course(sqlite_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "problem_repo_schemes", "https http")
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        courses.create_course(session=session, name="Course", instructor=teacher)


@pytest.fixture
def browser(course: None) -> Iterator[TestClient]:
    with in_process_client() as client:
        yield client


def _repo() -> CourseProblemRepo:
    with session_scope() as session:
        repo = problem_repos.repo_of(session=session, course_id=1)
        assert repo is not None
        session.expunge(repo)
        return repo


def test_a_linked_repository_is_pulled_by_its_webhook_all_or_nothing(
    browser: TestClient, repository: tuple[str, Path]
) -> None:
    url, work = repository
    token = sign_in(browser, "teacher")
    base = "/courses/1/problem-folders"
    linked = browser.post(
        f"{base}/repository", data={"csrf_token": token, "url": url, "branch": "main"}
    )
    found = re.search(r'<code class="secret">([0-9a-f]+)</code>', linked.text)
    assert linked.status_code == 200 and found
    secret = found[1]
    assert "POST http://testserver/hooks/courses/1/problems" in linked.text
    assert secret not in _repo().webhook_secret_hash  # only a digest and a nonce are kept
    assert secret not in browser.get(base).text  # shown once
    hook = "/hooks/courses/1/problems"

    wrong = browser.post(hook, content=b"{}", headers={"X-Hub-Signature-256": "sha256=00"})
    assert wrong.status_code == 403
    assert browser.post(hook, headers={"X-Gitlab-Token": "guess"}).status_code == 403
    assert (
        browser.post("/hooks/courses/2/problems", headers={"X-Gitlab-Token": secret}).status_code
        == 403
    )
    problem_pulls.wait(1, 60)
    assert _repo().last_pulled_at is None  # nothing happened

    with session_scope() as session:  # a course problem the repository does not hold
        problem_folders.import_problems(
            session=session,
            course_id=1,
            problems=folders.read_upload(PROJECT_ROOT / "problems" / "optax-multisteps"),
            author=None,
        )
    body = b'{"ref": "refs/heads/main"}'
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert (
        browser.post(hook, content=body, headers={"X-Hub-Signature-256": signature}).status_code
        == 202
    )
    problem_pulls.wait(1, 60)
    pulled = _repo()
    assert pulled.last_report.splitlines()[1] == f"c1-{NAME}: new version v1", pulled.last_report
    assert len(pulled.last_commit) == 40
    assert "c1-optax-multisteps: not in the repository, kept as it is" in pulled.last_report
    with session_scope() as session:
        assert [v.number for v in catalog.versions(session=session, slug=f"c1-{NAME}")] == [1]
        assert catalog.live_version(session=session, slug=f"c1-{NAME}") is None
    assert "new version v1" in browser.get(base).text

    # A second problem that is invalid: the pull imports neither, and says why by file.
    shutil.copytree(work / "problems" / NAME, work / "problems" / "broken")
    (work / "problems" / NAME / "hints.md").write_text("A changed hint.\n")
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "a broken problem", cwd=work)
    git("push", "--quiet", str(work.parent / "served" / "problems.git"), "main", cwd=work)
    assert browser.post(hook, headers={"X-Gitlab-Token": secret}).status_code == 202
    problem_pulls.wait(1, 60)
    refused = _repo()
    assert refused.last_report.startswith("Nothing imported from main at ")
    assert "reference_solutions/broken.py: missing" in refused.last_report
    assert refused.last_commit == pulled.last_commit
    with session_scope() as session:
        assert len(catalog.versions(session=session, slug=f"c1-{NAME}")) == 1
        assert catalog.versions(session=session, slug="c1-broken") == []

    # Throttled: six pulls a minute per course, pages and webhooks together.
    answers = [
        browser.post(f"{base}/pull", data={"csrf_token": token}).status_code for _ in range(5)
    ]
    problem_pulls.wait(1, 60)
    assert answers[:4] == [202] * 4 and answers[4] == 429


def test_local_paths_other_protocols_and_transport_helpers_are_refused(
    browser: TestClient,
) -> None:
    token = sign_in(browser, "teacher")
    for url in ("file:///etc", "/srv/other", "ext::sh -c touch% /tmp/x", "git://127.0.0.1/x", "-u"):
        refused = browser.post(
            "/courses/1/problem-folders/repository", data={"csrf_token": token, "url": url}
        )
        assert refused.status_code == 400 and "Nothing was imported or changed" in refused.text
    with session_scope() as session:
        assert problem_repos.repo_of(session=session, course_id=1) is None


def test_a_stored_file_url_is_refused_at_pull_time_too(course: None, tmp_path: Path) -> None:
    """An operator who allowed file:// once and then took it back: the pull checks again,
    and git itself is held to the allowed protocols (GIT_ALLOW_PROTOCOL)."""
    with session_scope() as session:
        session.add(CourseProblemRepo(course_id=1, url=f"file://{tmp_path}", branch="main",
                                      webhook_secret_hash="x:y"))  # fmt: skip
    report = problem_pulls.pull(1)
    assert report.startswith("Nothing imported: This server pulls repositories by http, https")
    assert _repo().last_report == report


def test_a_repository_link_cannot_read_the_servers_folders(
    course: None, repository: tuple[str, Path], tmp_path: Path
) -> None:
    """A symlink committed to the repository (``reference_solutions`` pointing at a
    folder of the server, as another course's materialised version is) is refused before
    the checkout is written: the pull imports nothing, and no file of the server's is read."""
    url, work = repository
    server = tmp_path / "server-data"
    server.mkdir()
    secret = "# ANOTHER COURSE'S REFERENCE\n"
    reference = work / "reference_solutions" / f"{NAME}.py"
    (server / f"{NAME}.py").write_text(reference.read_text() + secret)
    shutil.rmtree(work / "reference_solutions")
    (work / "reference_solutions").symlink_to(server, target_is_directory=True)
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "a link to the server", cwd=work)
    git("push", "--quiet", str(work.parent / "served" / "problems.git"), "main", cwd=work)
    with session_scope() as session:
        session.add(CourseProblemRepo(course_id=1, url=url, branch="main",
                                      webhook_secret_hash="x:y"))  # fmt: skip
    report = problem_pulls.pull(1)
    assert report.startswith("Nothing imported: ") and "reference_solutions" in report, report
    assert "link" in report
    with session_scope() as session:
        assert catalog.versions(session=session, slug=f"c1-{NAME}") == []


def test_a_small_repository_cannot_fill_the_disk_at_checkout(
    course: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Identical blobs are stored once: a 100 KiB repository can name the same 1 MiB file a
    thousand times. Its tree's sizes and entries are counted before anything is checked
    out, so nothing of it is written when they pass the caps."""
    monkeypatch.setattr(settings, "problem_repo_bytes", 4 << 20)
    served, work = tmp_path / "served", tmp_path / "work"
    served.mkdir()
    work.mkdir()
    git("init", "--quiet", "--bare", "-b", "main", "bomb.git", cwd=served)
    git("init", "--quiet", "-b", "main", cwd=work)
    for index in range(40):
        (work / f"copy-{index}.bin").write_bytes(bytes(1 << 20))
    git("add", ".", cwd=work)
    git("commit", "--quiet", "-m", "40 MiB of one blob", cwd=work)
    git("push", "--quiet", str(served / "bomb.git"), "main", cwd=work)
    checkout = tmp_path / "checkout"
    with git_http_server(served) as base, pytest.raises(problem_pulls.PullError) as refused:
        problem_pulls._clone(f"{base}/bomb.git", "main", checkout, tmp_path)
    assert "more than" in str(refused.value)
    written = [p for p in checkout.rglob("*") if ".git" not in p.relative_to(checkout).parts]
    assert written == []
