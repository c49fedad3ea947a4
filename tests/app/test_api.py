"""The JSON API with a throwaway database and a stub grader (no JAX: fast)."""

from __future__ import annotations

import json
import re
import typing

import pytest
from fastapi.testclient import TestClient

from app.core.config import settings
from app.core.db import session_scope
from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from app.server.main import create_app
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import CaseReport, GradeReport
from grader.problems.problem import Problem
from tests.app.conftest import bank_easiest_track_first, token_for


def stub_grader(
    problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
) -> GradeReport:
    verdict = Verdict.ACCEPTED if "correct" in code else Verdict.WRONG_ANSWER
    case = CaseReport(name="small", hidden=False, verdict=verdict)
    return GradeReport(
        problem=problem.slug,
        mode=mode,
        verdict=verdict,
        score=1.0 if verdict is Verdict.ACCEPTED else 0.0,
        cases=[case],
    )


def drain_queue() -> None:
    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(stub_grader))
    worker_loop_once(workers)


def worker_loop_once(workers: EmbeddedWorkers) -> None:
    """Grade until nothing is waiting (submissions, then regrade items)."""
    while workers.work_once("test"):
        pass


def test_health(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}


def test_requests_need_a_valid_token(client: TestClient) -> None:
    missing = client.get("/api/problems")
    assert missing.status_code == 401
    assert "Bearer" in missing.json()["detail"]
    assert client.get("/api/problems", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_problems_are_listed_easiest_track_first_by_position(client: TestClient) -> None:
    body = client.get("/api/problems", headers=token_for("ada")).json()
    bank = bank_easiest_track_first()
    assert body["count"] == len(bank)
    assert [(p["track"], p["position"]) for p in body["data"]] == [
        (p.config.track, p.config.position) for p in bank
    ]
    assert [(p["track"], p["position"]) for p in body["data"][:5]] == [
        ("jax-foundations", n) for n in (1, 2, 3, 4, 5)
    ]
    assert body["data"][0]["slug"] == "stable-logsumexp"


def test_submit_then_poll_until_done(client: TestClient) -> None:
    auth = token_for("ada")
    created = client.post(
        "/api/submissions",
        json={"problem": "scan-microbatched-grads", "code": "# correct", "mode": "submit"},
        headers=auth,
    )
    assert created.status_code == 202
    submission_id = created.json()["id"]
    queued = client.get(f"/api/submissions/{submission_id}", headers=auth).json()
    submitted_at = queued.pop("submitted_at")
    assert {k: v for k, v in queued.items() if v is not None} == {
        "id": submission_id,
        "status": "queued",
        "problem": "scan-microbatched-grads",
        "mode": "submit",
        "position": 1,
        "stage": "queued",
    }
    assert queued["verdict"] is None and queued["started_at"] is None
    drain_queue()
    done = client.get(f"/api/submissions/{submission_id}", headers=auth).json()
    assert done["status"] == "done"
    assert done["verdict"] == "accepted"
    assert done["verdict_label"] == "Accepted"  # the page's script shows these labels
    assert [case["verdict_label"] for case in done["cases"]] == ["Accepted"]
    assert submitted_at <= done["started_at"] <= done["finished_at"]  # ISO, UTC, "Z"
    assert {"score", "cases", "diagnosis", "stdout", "versions", "seconds"} <= done.keys()


def test_while_the_hidden_cases_run_the_samples_reports_are_read(client: TestClient) -> None:
    from app.grading import queue
    from app.models import Submission

    auth = token_for("ada")
    created = client.post("/api/submissions", headers=auth,
                          json={"problem": "scan-microbatched-grads", "code": "# x"})  # fmt: skip
    submission_id = created.json()["id"]
    with session_scope() as session:
        claimed = queue.claim(session, worker="w1", lease_seconds=60)
        assert claimed is not None and claimed.id == submission_id
    running = client.get(f"/api/submissions/{submission_id}", headers=auth).json()
    assert (running["status"], running["stage"], running["samples"]) == ("running", "samples", None)
    sample = CaseReport(name="small", hidden=False, verdict=Verdict.ACCEPTED, seconds=0.01)
    smuggled = CaseReport(name="secret", hidden=True, verdict=Verdict.WRONG_ANSWER)
    stored = json.dumps([sample.model_dump(mode="json"), smuggled.model_dump(mode="json")])
    with session_scope() as session:
        queue.samples_seen(session, submission_id=submission_id, worker="w2", samples_json=stored)
    assert client.get(f"/api/submissions/{submission_id}", headers=auth).json()["stage"] == (
        "samples"  # another worker's (a lost lease) writes nothing
    )
    with session_scope() as session:
        queue.samples_seen(session, submission_id=submission_id, worker="w1", samples_json=stored)
    hidden = client.get(f"/api/submissions/{submission_id}", headers=auth).json()
    assert hidden["stage"] == "hidden"
    assert [case["name"] for case in hidden["samples"]] == ["small"]  # never a hidden case
    with session_scope() as session:
        row = session.get(Submission, submission_id)
        assert row is not None and row.samples_json == stored


def test_learners_see_only_their_own_submissions(client: TestClient) -> None:
    ada, bob = token_for("ada"), token_for("bob")
    submission_id = client.post(
        "/api/submissions", json={"problem": "scan-microbatched-grads", "code": "x"}, headers=ada
    ).json()["id"]
    assert client.get(f"/api/submissions/{submission_id}", headers=bob).status_code == 404


@pytest.mark.parametrize(
    ("slug", "detail"),
    [
        (
            "stable-logsumexpp",
            "Unknown problem 'stable-logsumexpp'. Did you mean 'stable-logsumexp'?",
        ),
        ("logsumexp", "Unknown problem 'logsumexp'. Did you mean 'stable-logsumexp'?"),
        ("optax-multistep", "Unknown problem 'optax-multistep'. Did you mean 'optax-multisteps'?"),
        (
            "per-example-grad",
            "Unknown problem 'per-example-grad'. Did you mean 'per-example-grads'?",
        ),
        ("zzz", "Unknown problem 'zzz'. The problems are listed at /api/problems."),
    ],
)
def test_an_unknown_problem_suggests_the_closest_ones(
    client: TestClient, slug: str, detail: str
) -> None:
    answer = client.post(
        "/api/submissions", json={"problem": slug, "code": "x"}, headers=token_for("ada")
    )
    assert answer.status_code == 404
    assert answer.json()["detail"] == detail


@pytest.mark.parametrize(
    ("body", "status", "phrase"),
    [
        ({"problem": "no-such", "code": "x"}, 404, "Unknown problem 'no-such'"),
        (
            {"problem": "scan-microbatched-grads", "code": "#" * (300 * 1024)},
            413,
            "the limit is 256 KiB",
        ),
        ({"problem": "scan-microbatched-grads", "code": "x", "mode": "grade"}, 422, "run"),
        ({"problem": "scan-microbatched-grads"}, 422, "code"),
    ],
)
def test_bad_submissions_get_clear_errors(
    client: TestClient, body: dict[str, str], status: int, phrase: str
) -> None:
    answer = client.post("/api/submissions", json=body, headers=token_for("ada"))
    assert answer.status_code == status
    assert phrase in str(answer.json()["detail"])


def test_queued_submissions_per_learner_are_capped(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "max_queued_per_user", 2)
    auth = token_for("ada")
    for _ in range(2):
        assert (
            client.post(
                "/api/submissions",
                json={"problem": "scan-microbatched-grads", "code": "x"},
                headers=auth,
            ).status_code
            == 202
        )
    refused = client.post(
        "/api/submissions", json={"problem": "scan-microbatched-grads", "code": "x"}, headers=auth
    )
    assert refused.status_code == 429
    assert "wait for one to finish" in refused.json()["detail"]


def test_graded_submits_per_problem_and_hour_are_capped_but_runs_are_not(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "max_submits_per_hour", 2)
    auth = token_for("ada")

    def send(mode: str, problem: str = "scan-microbatched-grads") -> int:
        body = {"problem": problem, "code": "x", "mode": mode}
        answer = client.post("/api/submissions", json=body, headers=auth)
        drain_queue()
        return answer.status_code

    assert [send("submit"), send("submit")] == [202, 202]
    refused = client.post(
        "/api/submissions", json={"problem": "scan-microbatched-grads", "code": "x"}, headers=auth
    )
    assert refused.status_code == 429
    assert "in the last hour" in refused.json()["detail"]
    assert send("run") == 202  # the samples stay open
    assert send("submit", "nnx-grad-accumulation") == 202  # and other problems


def test_openapi_is_served(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/submissions",
        "/api/submissions/{submission_id}",
        "/api/problems",
        "/healthz",
    } <= paths.keys()


def test_api_docs_are_served_without_a_cdn(client: TestClient) -> None:
    docs = client.get("/docs")
    assert docs.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
    assert sources
    assert all(source.startswith("/") for source in sources), sources  # nothing from another host
    assert client.get("/static/vendor/swagger-ui/swagger-ui-bundle.js").status_code == 200
    assert client.get("/redoc").status_code == 404


def test_a_created_submission_is_committed_before_the_answer(database: str) -> None:
    """Checked at the moment the answer's body is sent (a TestClient call returns only
    after everything, teardown included, so looking afterwards would prove nothing)."""
    from sqlalchemy import select
    from starlette.types import Message, Receive, Scope, Send

    from app.core import request_db as deps
    from app.models import Submission

    # FastAPI's default dependency scope would commit after the response is
    # sent; the session dependency must declare "function" to commit before.
    (dependency,) = typing.get_args(deps.SessionDep)[1:]
    assert dependency.scope == "function"
    app = create_app(workers=0, prepare=False)
    committed_when_sent: list[bool] = []

    async def watching(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_and_look(message: Message) -> None:
            if (
                scope["type"] == "http"
                and scope["path"] == "/api/submissions"
                and message["type"] == "http.response.body"
                and message.get("body")
            ):
                sent_id = json.loads(message["body"])["id"]
                with session_scope() as session:
                    committed_when_sent.append(sent_id in session.scalars(select(Submission.id)))
            await send(message)

        await app(scope, receive, send_and_look)

    headers = token_for("ada")
    with TestClient(watching) as watched:
        created = watched.post(
            "/api/submissions",
            json={"problem": "scan-microbatched-grads", "code": "x"},
            headers=headers,
        )
    assert created.status_code == 202, created.text
    assert committed_when_sent == [True]
