"""Workers on other machines share only the database: two `jaxjudge worker`
processes with their own data directories and no problems folder grade from a real
PostgreSQL; one is killed (SIGKILL) in the middle of a grading, and every submission
is still graded, exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.models import Submission, WorkerHeartbeat
from grader.config import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]
SLUG = "scan-microbatched-grads"
SUBMISSIONS = 6


def _worker(url: str, home: Path) -> subprocess.Popen[bytes]:
    """A worker as another machine runs it: its own data directory, no problems or
    reference folders (empty ones), nothing of the web server's."""
    empty = home / "empty"
    (empty / "problems").mkdir(parents=True)
    env = {
        **os.environ,
        "JAXJUDGE_DATABASE_URL": url,
        "JAXJUDGE_DATA_DIR": str(home / "var"),
        "JAXJUDGE_CONTENT_DIR": str(empty),
        "JAXJUDGE_LEASE_SECONDS": "8",
        "JAXJUDGE_POOL_SIZE": "1",
    }
    with (home / "worker.log").open("wb") as log:  # the child keeps its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "app.commands.cli", "worker", "--threads", "1"],
            env=env,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _rows() -> list[Submission]:
    with session_scope() as session:
        return list(session.query(Submission).order_by(Submission.id))


def _wait_for(condition: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_two_workers_one_killed_mid_grading_every_submission_graded_exactly_once(
    postgres_database: str, tmp_path: Path
) -> None:
    code = (PROJECT_ROOT / "reference_solutions" / f"{SLUG}.py").read_text()
    with session_scope() as session:
        for number in range(SUBMISSIONS):
            learner = accounts.create_user(
                session=session, name=f"learner{number}", password="long test password"
            )
            submission_data.create_submission(
                session=session, user=learner, problem=SLUG, code=code, mode="submit", max_queued=9
            )
    doomed, survivor = (
        _worker(postgres_database, tmp_path / "a"),
        _worker(postgres_database, tmp_path / "b"),
    )
    try:
        _wait_for(
            lambda: any(
                row.status == "running" and f":{doomed.pid}-" in (row.lease_owner or "")
                for row in _rows()
            ),
            240,
            "the first worker to hold a submission",
        )
        os.killpg(doomed.pid, signal.SIGKILL)  # mid-grading: no clean-up of any kind
        doomed.wait()
        _wait_for(lambda: all(row.status == "done" for row in _rows()), 240, "every verdict")
        rows = _rows()
        assert [row.verdict for row in rows] == ["accepted"] * SUBMISSIONS, (
            tmp_path / "b" / "worker.log"
        ).read_text()[-3000:]
        assert all(row.lease_owner is None and row.finished_at for row in rows)
        assert any(row.attempts == 2 for row in rows)  # the one taken from the killed worker
        with session_scope() as session:
            beat = session.query(WorkerHeartbeat).filter_by(pid=survivor.pid).one()
            assert (beat.device, beat.pool_size, beat.threads) == ("cpu", 1, 1)
            assert beat.host and beat.version
        # Nothing came from a content folder: its problems/ is as empty as it started.
        content = tmp_path / "b" / "empty"
        assert [path.name for path in content.iterdir()] == ["problems"]
        assert not any((content / "problems").iterdir())
    finally:
        for process in (doomed, survivor):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
