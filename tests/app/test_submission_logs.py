"""The submission id, end to end in the logs: the request that stored it, the worker
that graded it, and what the grading logged (grader/running/log_context.py)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.grading.runs import FunctionGrader
from app.grading.worker import EmbeddedWorkers
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from grader.running.log_context import SubmissionFilter
from tests.app.conftest import BANK_SLUG, token_for


def _grader(problem: Problem, code: str, mode: Mode, device: str, draw: int) -> GradeReport:
    logging.getLogger("jaxjudge.supervise").warning("a line from inside the grading")
    return GradeReport(problem=problem.slug, mode=mode, verdict=Verdict.ACCEPTED, score=1.0)


def test_one_submission_id_from_the_route_to_the_sandbox(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    caplog.handler.addFilter(SubmissionFilter())
    ada = token_for("ada")
    made = client.post(
        "/api/submissions", json={"problem": BANK_SLUG, "code": "x", "mode": "run"}, headers=ada
    )
    submission_id = made.json()["id"]
    client.get(f"/api/submissions/{submission_id}", headers=ada)
    requests: list[dict[str, Any]] = [
        json.loads(r.getMessage()) for r in caplog.records if r.name == "jaxjudge.requests"
    ]
    assert [(r["method"], r["submission"]) for r in requests] == [
        ("POST", submission_id),
        ("GET", submission_id),
    ]
    caplog.clear()
    assert EmbeddedWorkers(threads=1, grader=FunctionGrader(_grader)).work_once("test:1-1:0")
    inside = [r for r in caplog.records if r.getMessage() == "a line from inside the grading"]
    assert [r.submission for r in inside] == [submission_id]  # type: ignore[attr-defined]
    done = [r for r in caplog.records if r.getMessage().startswith(f"submission {submission_id}:")]
    assert done and all(r.submission == submission_id for r in done)  # type: ignore[attr-defined]
