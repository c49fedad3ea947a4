"""The operators' view: /metrics for Prometheus and /admin/workers, both read from the
database (every worker on every machine), on SQLite and PostgreSQL alike."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.core.config import settings
from app.core.db import session_scope
from app.data import accounts
from app.data import submissions as submission_data
from app.models import Submission, WorkerHeartbeat, utcnow
from app.server.metrics import allowed
from tests.app.conftest import sign_in

TOKEN = "a-long-scrape-token"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _world() -> tuple[int, int]:
    """One graded submission (queued 1 s, graded in 2 s), one queued, one running under
    an expired lease, and one worker's heartbeat."""
    now = utcnow()
    with session_scope() as session:
        ada = accounts.create_user(session=session, name="ada", password="long test password")
        ids = [
            submission_data.create_submission(
                session=session,
                user=ada,
                problem="scan-microbatched-grads",
                code="x",
                mode="submit",
                max_queued=9,
            ).id
            for _ in range(3)
        ]
        done, _queued, lost = (session.get_one(Submission, i) for i in ids)
        done.status, done.verdict = "done", "accepted"
        done.created_at, done.started_at, done.finished_at = (
            now - timedelta(seconds=3),
            now - timedelta(seconds=2),
            now,
        )
        lost.status, lost.lease_owner = "running", "gone-host:123-4:0"
        lost.lease_expires_at = now - timedelta(seconds=30)
        session.add(
            WorkerHeartbeat(
                name="grader-1:77-1",
                host="grader-1",
                pid=77,
                device="cpu",
                threads=2,
                pool_size=2,
                idle_children=1,
                warm=True,
                current_jobs=str(ids[2]),
                version="0.2.0",
                heartbeat_at=now - timedelta(seconds=4),
            )
        )
        session.flush()
        return ids[0], ids[2]


def test_metrics_count_the_queue_the_verdicts_the_latencies_and_the_workers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "metrics_token", TOKEN)
    _world()
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200
    got = _samples(answer.text)
    assert got[("jaxjudge_submissions", (("status", "queued"),))] == 1
    assert got[("jaxjudge_submissions", (("status", "running"),))] == 1
    assert got[("jaxjudge_verdicts_total", (("verdict", "accepted"),))] == 1
    latency = "jaxjudge_submit_to_verdict_seconds_bucket"
    assert got[(latency, (("le", "2.0"),))] == 0  # it took 3 s
    assert got[(latency, (("le", "3.0"),))] == 1
    assert got[("jaxjudge_submit_to_verdict_seconds_sum", ())] == pytest.approx(3.0)
    grading = "jaxjudge_grading_seconds_bucket"
    assert got[(grading, (("le", "2.0"), ("problem", "scan-microbatched-grads")))] == 1
    worker = "grader-1:77-1"
    assert got[("jaxjudge_pool_children", (("state", "idle"), ("worker", worker)))] == 1
    assert got[("jaxjudge_pool_children", (("state", "busy"), ("worker", worker)))] == 1
    age = got[("jaxjudge_worker_heartbeat_age_seconds", (("worker", worker),))]
    assert 3.5 < age < 60


def test_without_a_token_only_a_local_scraper_not_through_a_proxy_is_answered() -> None:
    assert allowed(token=None, authorization=None, client="127.0.0.1", forwarded=False)
    assert allowed(token=None, authorization=None, client="::1", forwarded=False)
    assert not allowed(token=None, authorization=None, client="127.0.0.1", forwarded=True)
    assert not allowed(token=None, authorization=None, client="10.0.0.8", forwarded=False)
    assert not allowed(token="t", authorization=None, client="127.0.0.1", forwarded=False)
    assert allowed(token="t", authorization="Bearer t", client="10.0.0.8", forwarded=True)


def test_the_admin_page_lists_workers_and_puts_stuck_submissions_first(client: TestClient) -> None:
    _done, lost = _world()
    with session_scope() as session:
        accounts.create_user(
            session=session, name="root", password="long test password", role="admin"
        )
    sign_in(client, "root")
    page = client.get("/admin/workers")
    assert page.status_code == 200
    assert "grader-1:77-1" in page.text and "1 / 2" in page.text
    assert "1 queued, 1 running, 1 graded" in page.text
    assert "1 look stuck" in page.text
    stuck_row = page.text.index('<tr class="stuck">\n  <td>' + str(lost))
    assert stuck_row < page.text.index("<td>queued</td>")
    assert "lease expired" in page.text
