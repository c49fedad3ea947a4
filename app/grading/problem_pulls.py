"""Pulling a course's git repository of problem folders, on a thread of its own.

The clone is untrusted input from a URL an instructor chose: one shallow branch into a
temporary folder, within a time limit and a file-size limit, with no prompt, no
credential helper, no user or system git configuration, no hooks and only the
protocols the operator allows (``GIT_ALLOW_PROTOCOL``, which submodules and redirects
obey too). What it holds is imported as an upload is (app/data/problem_folders.py): all
or nothing, as new unpublished versions. The report (commit, what changed, or the
errors) is stored on the course's repository row, in a transaction of its own."""

from __future__ import annotations

import logging
import os
import resource
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from app.core.config import settings
from app.core.db import session_scope
from app.data import course_problems, problem_folders, problem_repos
from app.errors import InvalidInputError
from app.models import utcnow
from grader.problems import folders
from grader.problems.folders import FolderError

log = logging.getLogger(__name__)
# Files a checkout may hold: ten times what one import reads (folders.MAX_ENTRIES), for
# what a repository keeps beside its problems (docs, CI), never an unbounded count.
MAX_TREE_ENTRIES = 10 * folders.MAX_ENTRIES
_running: dict[int, threading.Thread] = {}
_lock = threading.Lock()


class PullError(Exception):
    """A pull that could not fetch the repository, with a sentence for the instructor."""


def start_pull(course_id: int) -> bool:
    """Pull the course's repository on a new thread; False when one is under way."""
    with _lock:
        running = _running.get(course_id)
        if running is not None and running.is_alive():
            return False
        thread = threading.Thread(
            target=pull, args=(course_id,), name=f"problem-pull-{course_id}", daemon=True
        )
        _running[course_id] = thread
        thread.start()
    return True


def wait(course_id: int, timeout: float) -> None:
    """Wait for the course's pull under way, if any (tests and the CLI)."""
    thread = _running.get(course_id)
    if thread is not None:
        thread.join(timeout)


def pull(course_id: int) -> str:
    """Clone, import, store the report; returns the report."""
    with session_scope() as session:
        repo = problem_repos.repo_of(session=session, course_id=course_id)
        if repo is None:
            return ""
        url, branch = repo.url, repo.branch
    commit, lines = "", []
    try:
        with tempfile.TemporaryDirectory(prefix="jaxjudge-pull-") as temporary:
            checkout = Path(temporary) / "checkout"
            commit = _clone(url, branch, checkout, Path(temporary))
            upload = folders.read_upload(checkout)
            with session_scope() as session:
                imported = problem_folders.import_problems(
                    session=session, course_id=course_id, problems=upload, author=None
                )
                pulled = {i.slug for i in imported}
                kept = [
                    f"{slug}: not in the repository, kept as it is"
                    for slug in course_problems.course_problem_slugs(
                        session=session, course_id=course_id
                    )
                    if slug not in pulled
                ]
            lines = [f"Pulled {branch} at {commit[:12]}:", *(i.line() for i in imported), *kept]
    except FolderError as error:
        lines = [f"Nothing imported from {branch} at {commit[:12]}:", *error.errors]
    except (PullError, InvalidInputError) as error:
        lines = [f"Nothing imported: {error}"]
    except Exception:  # a bug must not kill silently: the instructor sees that it failed
        log.exception("pulling course %s's repository failed", course_id)
        lines = ["Nothing imported: the pull failed on the server (its log has the details)."]
    report = "\n".join(lines)
    with session_scope() as session:
        repo = problem_repos.repo_of(session=session, course_id=course_id)
        if repo is not None:
            if commit and not lines[0].startswith("Nothing"):
                repo.last_commit = commit
            repo.last_pulled_at = utcnow()
            repo.last_report = report
    return report


def _git_environment(home: Path) -> dict[str, str]:
    allowed = [s for s in settings.problem_repo_schemes.split() if s != "ext"]
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ALLOW_PROTOCOL": ":".join(allowed),
        "GIT_LFS_SKIP_SMUDGE": "1",
        "LC_ALL": "C",
    }


def _limit_files() -> None:  # in the git child, before exec: no file it writes may pass the cap
    size = settings.problem_repo_bytes
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def _clone(url: str, branch: str, checkout: Path, home: Path) -> str:
    """Clone ``branch`` of ``url`` into ``checkout``; returns the commit's id."""
    url = problem_repos.checked_url(url)  # the operator's setting may have changed since
    command = [
        "git",
        "-c", "credential.helper=",
        "-c", "core.hooksPath=/dev/null",
        "-c", "http.followRedirects=false",
        "-c", "transfer.fsckObjects=true",
        "-c", "protocol.allow=never",
        *(arg for s in _git_environment(home)["GIT_ALLOW_PROTOCOL"].split(":") if s
          for arg in ("-c", f"protocol.{s}.allow=always")),
        # Nothing is written but the objects until the tree is read (``_check_tree``).
        "clone", "--quiet", "--no-checkout", "--depth", "1", "--single-branch", "--no-tags",
        "--branch", branch, "--", url, str(checkout),
    ]  # fmt: skip
    _git(command, home, f"git could not clone {branch} of {url}")
    shutil.rmtree(checkout / ".git" / "hooks", ignore_errors=True)
    _check_tree(_git([*_in(checkout), "ls-tree", "-r", "-l", "-z", "HEAD"], home, "").stdout)
    _git([*_in(checkout), "checkout", "--quiet", "--force", "HEAD", "--", "."], home,
         "git could not check out the repository")  # fmt: skip
    return _git([*_in(checkout), "rev-parse", "HEAD"], home, "").stdout.decode().strip()


def _in(checkout: Path) -> list[str]:
    hooks, links = "core.hooksPath=/dev/null", "core.symlinks=false"
    return ["git", "-C", str(checkout), "-c", hooks, "-c", links]


def _git(command: list[str], home: Path, failure: str) -> subprocess.CompletedProcess[bytes]:
    try:
        done = subprocess.run(
            command,
            env=_git_environment(home),
            capture_output=True,
            timeout=settings.problem_repo_timeout,
            preexec_fn=_limit_files,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise PullError(
            f"the clone took longer than {settings.problem_repo_timeout:g} seconds"
        ) from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise PullError(f"{failure or 'git failed'}: {said[-1] if said else ''}")
    return done


def _check_tree(listing: bytes) -> None:
    """Refuse, before a file is written, a tree that names links or submodules (a link
    committed to the repository would make the import read the server's files), or whose
    files pass the caps: identical blobs are stored once, so a tiny repository can name one
    large file thousands of times, and only the tree tells what its checkout would write."""
    total, count = 0, 0
    for entry in filter(None, listing.split(b"\0")):
        info, _, name = entry.partition(b"\t")
        mode, kind, _object, size = info.split()
        path = name.decode(errors="replace")[:200]
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            raise PullError(f"{path}: links, submodules and special files are not accepted")
        total, count = total + int(size), count + 1
        if total > settings.problem_repo_bytes or count > MAX_TREE_ENTRIES:
            raise PullError(
                f"the repository holds more than {settings.problem_repo_bytes} bytes"
                f" or {MAX_TREE_ENTRIES} files"
            )
