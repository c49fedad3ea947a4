"""When the database fails: a locked or read-only SQLite database in a temporary
directory gives 503 with Retry-After (JSON for the API, a page for browsers),
never a 500; /healthz stays up, /readyz says what is wrong; workers back off
with one log line per state change; a finished verdict waits for the database."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core.config import settings
from app.core.db import migrate, session_scope
from app.data import accounts, api_tokens
from app.data import submissions as submission_data
from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from app.models import Submission
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from tests.app.conftest import form_token, in_process_client


@pytest.fixture
def quick(sqlite_database: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Requests give up on the database after 0.5 s (a fresh engine per test URL)."""
    monkeypatch.setattr(settings, "database_wait_seconds", 0.5)
    url = sqlite_database.replace("test.db", "quick.db")
    monkeypatch.setattr(settings, "database_url", url)
    migrate()
    from app.data import catalog

    with session_scope() as session:
        catalog.sync(session=session)
    return url.removeprefix("sqlite:///")


@contextmanager
def locked(path: str) -> Iterator[None]:
    """Another process's write transaction on the database, held for the block."""
    holder = sqlite3.connect(path, timeout=5, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.fixture
def bearer(quick: str) -> dict[str, str]:
    with session_scope() as session:
        user = accounts.create_user(session=session, name="ada", password="long test password")
        return {"Authorization": f"Bearer {api_tokens.create(session=session, user=user)[0]}"}


def test_a_locked_database_is_a_503_not_a_500(quick: str, bearer: dict[str, str]) -> None:
    with in_process_client() as client, locked(quick):
        started = time.monotonic()
        answer = client.post(
            "/api/submissions",
            json={"problem": "scan-microbatched-grads", "code": "x"},
            headers=bearer,
        )
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "2"
        assert "nothing was changed" in answer.json()["detail"]
        assert time.monotonic() - started < 5
        assert client.get("/api/problems", headers=bearer).status_code == 200  # reads go on
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["problems"][0].startswith("database:")
        page = client.post("/signup", data={"name": "bob", "password": "long test password"})
        assert page.status_code in (403, 503)  # CSRF first; either way, no 500


def test_a_read_only_database_is_a_503_with_a_page_for_browsers(
    quick: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with in_process_client() as client:
        token = form_token(client, "/signup")
        monkeypatch.setattr(settings, "database_url", f"sqlite:///file:{quick}?mode=ro&uri=true")
        answer = client.post(
            "/signup", data={"name": "bob", "password": "long test password", "csrf_token": token}
        )
    assert answer.status_code == 503
    assert "Try again in a moment" in answer.text and "<html" in answer.text


def test_workers_back_off_and_log_one_line_per_state_change(
    quick: str, bearer: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        submission_data.create_submission(
            session=session,
            user=ada,
            problem="scan-microbatched-grads",
            code="x",
            mode="run",
            max_queued=9,
        )  # something to claim: claiming is a write
    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(accept_all), poll_seconds=0.05)
    stop = threading.Event()
    caplog.set_level(logging.INFO, logger="jaxjudge.worker")
    thread = threading.Thread(target=lambda: _loop_until(workers, stop), daemon=True)
    with locked(quick):
        thread.start()
        time.sleep(2.5)  # several polls fail, each waiting 0.5 s for the lock
    time.sleep(1.5)
    stop.set()
    thread.join(timeout=10)
    lines = [r.getMessage() for r in caplog.records]
    assert sum("the database fails" in line for line in lines) == 1, lines
    assert sum("answers again" in line for line in lines) == 1, lines
    assert not any(r.exc_info for r in caplog.records)  # no traceback per poll


def accept_all(problem: Problem, code: str, mode: Mode, device: str, draw: int) -> GradeReport:
    return GradeReport(problem=problem.slug, mode=mode, verdict=Verdict.ACCEPTED, score=1.0)


def _loop_until(workers: EmbeddedWorkers, stop: threading.Event) -> None:
    workers._stop = stop
    workers._loop("test:1-1:0")


def test_a_finished_verdict_waits_for_the_database_and_is_recorded_once(
    quick: str, bearer: dict[str, str]
) -> None:
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        submission_id = submission_data.create_submission(
            session=session,
            user=ada,
            problem="scan-microbatched-grads",
            code="x",
            mode="run",
            max_queued=9,
        ).id
    release = threading.Event()

    def slow_grader(
        problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
    ) -> GradeReport:
        release.wait(10)  # the database gets locked while "grading"
        return GradeReport(problem=problem.slug, mode=mode, verdict=Verdict.ACCEPTED, score=1.0)

    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(slow_grader))
    done = threading.Thread(target=workers.work_once, args=("test:1-1:0",), daemon=True)
    done.start()
    time.sleep(0.5)
    with locked(quick):
        release.set()
        time.sleep(2.0)  # the verdict's write fails while the lock is held...
    done.join(timeout=30)  # ...and lands once it is gone
    with session_scope() as session:
        row = session.get_one(Submission, submission_id)
        assert (row.status, row.verdict, row.attempts) == ("done", "accepted", 1)


def test_ids_past_the_databases_range_are_not_found(
    quick: str, bearer: dict[str, str], tmp_path: Path
) -> None:
    with in_process_client() as client:
        assert client.get(f"/api/submissions/{2**63}", headers=bearer).status_code == 404
        assert client.get(f"/api/submissions/{2**64 + 5}", headers=bearer).status_code == 404
