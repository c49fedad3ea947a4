"""Notebooks submitted through the JSON API, the problem page's upload and a course's
notebook assignment (app/grading/notebook_submissions.py), graded by a stub (no JAX)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, func, select
from sqlalchemy.orm import ORMExecuteState, Session

from app.core.db import engine, session_scope
from app.data import accounts, assignments, courses
from app.data.assignments import AssignmentSettings
from app.grading import notebook_submissions
from app.models import Assignment, Course, Submission, User
from tests.app.conftest import sign_in, token_for
from tests.app.test_api import drain_queue

SLUG = "scan-microbatched-grads"  # entry point: microbatched_grads
OTHER = "nnx-grad-accumulation"  # entry point: grad_accumulation_step


def ipynb(*sources: str) -> bytes:
    cells: list[dict[str, object]] = [
        {"cell_type": "markdown", "metadata": {}, "source": "# My work"}
    ]
    cells += [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": s}
        for s in sources
    ]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}).encode()


# The stub grader accepts code that says "correct" (tests/app/test_api.py).
NOTEBOOK = ipynb(
    "!pip install jax\nimport numpy as np",
    "def microbatched_grads(w, b, x_full, y_full, n_microbatches):\n    return 'correct'",
    "print(microbatched_grads(1, 2, 3, 4, 5))",
)


def stored() -> int:
    with session_scope() as session:
        return session.scalar(select(func.count()).select_from(Submission)) or 0


def upload(client: TestClient, data: bytes, headers: dict[str, str], problem: str = SLUG) -> Any:
    return client.post(
        "/api/submissions/notebook",
        data={"problem": problem},
        files={"notebook": ("work.ipynb", data, "application/x-ipynb+json")},
        headers=headers,
    )


def test_a_notebook_is_graded_as_the_code_it_defines(client: TestClient) -> None:
    auth = token_for("ada")
    answer = upload(client, NOTEBOOK, {**auth, "Idempotency-Key": "nb-1"})
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert body["cells"] == [3] and body["missing"] == []
    assert "cell 2, line 1: shell escape '!pip install jax' dropped" in body["notes"]
    assert any(n.startswith("cell 4, line 1: top-level statement") for n in body["notes"])
    assert upload(client, NOTEBOOK, {**auth, "Idempotency-Key": "nb-1"}).json()["id"] == body["id"]
    with session_scope() as session:
        code = session.get(Submission, body["id"]).code  # type: ignore[union-attr]
    assert code.startswith("# Extracted by jaxjudge from a notebook's code cells 3")
    assert "print(" not in code.split("# cell 3")[1] and "!pip" not in code.split("# cell 3")[1]
    drain_queue()
    done = client.get(f"/api/submissions/{body['id']}", headers=auth).json()
    assert done["verdict"] == "accepted"


@pytest.mark.parametrize(
    ("data", "status", "words"),
    [
        (b"{not json", 400, "not JSON"),
        (json.dumps({"nbformat": 3, "cells": []}).encode(), 400, "only nbformat 4"),
        (ipynb("def something_else():\n    pass"), 400, "defines none of microbatched_grads"),
        (b" " * (4 * 1024 * 1024 + 1), 413, "larger than 4096 KiB"),
    ],
)
def test_a_bad_notebook_is_a_clear_error_and_stores_nothing(
    client: TestClient, data: bytes, status: int, words: str
) -> None:
    answer = upload(client, data, token_for("ada"))
    assert answer.status_code == status, answer.text
    assert words in answer.json()["detail"]
    assert stored() == 0


def test_an_unknown_problem_is_404(client: TestClient) -> None:
    assert upload(client, NOTEBOOK, token_for("ada"), problem="no-such").status_code == 404


def test_the_problem_page_uploads_with_its_session_and_csrf_token(client: TestClient) -> None:
    token_for("ada")
    csrf = sign_in(client, "ada")
    page = client.get(f"/problems/{SLUG}").text
    assert 'id="notebook"' in page and "Upload a notebook (.ipynb) for grading" in page
    assert "magics" in page and "shell escapes" in page and "microbatched_grads" in page
    assert upload(client, NOTEBOOK, {}).status_code == 403  # a cookie alone proves nothing
    answer = upload(client, NOTEBOOK, {"X-CSRF-Token": csrf})
    assert answer.status_code == 202, answer.text
    assert stored() == 1


@pytest.fixture
def notebook_course(database: str) -> int:
    """A course whose notebook "Week 1" holds two problems, with ada as a learner."""
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        ada = accounts.create_user(session=session, name="ada", password="long test password")
        course = courses.create_course(session=session, name="JAX 101", instructor=teacher)
        courses.join_course(session=session, code=course.join_code, user=ada, address="test")
        for slug in (SLUG, OTHER):
            assignments.assign(
                session=session,
                course=course,
                problem=slug,
                settings=AssignmentSettings(notebook="  Week   1 "),
            )
        return course.id


TWO_PROBLEMS = ipynb(
    "def microbatched_grads(w, b, x_full, y_full, n_microbatches):\n    return 'correct'",
    "%%time\nrun_everything()",
    "def grad_accumulation_step(model, batch):\n    return 'wrong'",
)


def test_a_notebook_assignment_makes_one_submission_per_problem(
    client: TestClient, notebook_course: int
) -> None:
    with session_scope() as session:
        names = [a.notebook for a in session.scalars(select(Assignment))]
    assert names == ["Week 1", "Week 1"]  # spaces folded
    csrf = sign_in(client, "ada")
    course_page = client.get(f"/courses/{notebook_course}").text
    assert f'action="/courses/{notebook_course}/notebook-submissions"' in course_page
    answer = client.post(
        f"/api/courses/{notebook_course}/notebook-submissions",
        data={"name": "Week 1"},
        files={"notebook": ("week1.ipynb", TWO_PROBLEMS, "application/x-ipynb+json")},
        headers={"X-CSRF-Token": csrf, "Idempotency-Key": "week-1"},
    )
    assert answer.status_code == 202, answer.text
    made = {s["problem"]: s for s in answer.json()["submissions"]}
    assert set(made) == {SLUG, OTHER} and all(s["id"] for s in made.values())
    assert "cell 3: cell magic '%%time' dropped the cell" in made[SLUG]["notes"]
    drain_queue()
    verdicts = {
        p: client.get(f"/api/submissions/{s['id']}").json()["verdict"] for p, s in made.items()
    }
    assert verdicts == {SLUG: "accepted", OTHER: "wrong_answer"}
    again = client.post(  # a retry with the same key stores nothing more
        f"/api/courses/{notebook_course}/notebook-submissions",
        data={"name": "Week 1"},
        files={"notebook": ("week1.ipynb", TWO_PROBLEMS, "application/x-ipynb+json")},
        headers={"X-CSRF-Token": csrf, "Idempotency-Key": "week-1"},
    )
    assert {s["id"] for s in again.json()["submissions"]} == {s["id"] for s in made.values()}
    assert stored() == 2


def test_the_course_page_upload_lists_each_problem_or_why_not(
    client: TestClient, notebook_course: int
) -> None:
    sign_in(client, "ada")
    page = client.get(f"/courses/{notebook_course}").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token and "Week 1" in page
    only_one = ipynb("def microbatched_grads(w, b, x, y, n):\n    return 1")
    answer = client.post(
        f"/courses/{notebook_course}/notebook-submissions",
        data={"name": "Week 1", "csrf_token": token[1]},
        files={"notebook": ("w.ipynb", only_one, "application/x-ipynb+json")},
    )
    assert answer.status_code == 200, answer.text
    assert "1 of 2 problems submitted" in answer.text
    assert "not submitted. The notebook defines none of grad_accumulation_step" in answer.text
    assert re.search(rf'href="/problems/{SLUG}#submission-\d+"', answer.text)
    bad = client.post(
        f"/courses/{notebook_course}/notebook-submissions",
        data={"name": "Week 1", "csrf_token": token[1]},
        files={"notebook": ("w.ipynb", b"[]", "application/x-ipynb+json")},
    )
    assert bad.status_code == 400 and "its JSON is not an object" in bad.text
    unknown = client.post(
        f"/courses/{notebook_course}/notebook-submissions",
        data={"name": "Week 9", "csrf_token": token[1]},
        files={"notebook": ("w.ipynb", only_one, "application/x-ipynb+json")},
    )
    assert unknown.status_code == 404 and "no notebook assignment" in unknown.text
    assert stored() == 1


def test_the_assign_form_and_the_api_set_the_notebook(
    client: TestClient, notebook_course: int
) -> None:
    teacher = token_for("teacher2", role="instructor")
    assert client.get(f"/api/courses/{notebook_course}", headers=teacher).status_code == 404
    csrf = sign_in(client, "teacher")
    page = client.get(f"/courses/{notebook_course}?edit={SLUG}").text
    assert 'name="notebook" maxlength="100" value="Week 1"' in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token
    client.post(
        f"/courses/{notebook_course}/assignments",
        data={"problem": SLUG, "notebook": "", "csrf_token": token[1]},
    )
    with session_scope() as session:
        notebooks = {a.problem: a.notebook for a in session.scalars(select(Assignment))}
    assert notebooks == {SLUG: None, OTHER: "Week 1"}
    answer = client.put(
        f"/api/courses/{notebook_course}/assignments",
        json={"problem": SLUG, "notebook": "Week 2"},
        headers={"X-CSRF-Token": csrf},
    )
    assert answer.status_code == 200 and answer.json()["notebook"] == "Week 2"


def test_one_upload_sent_twice_at_once_answers_the_same_submissions(
    notebook_course: int,
) -> None:
    # A client's retry while the first request is still running: the retry looks for
    # its Idempotency-Key before the first commits and inserts after it did. The
    # unique key refused the insert and the request answered 500.
    def upload_in(session: Session) -> list[int | None]:
        ada = session.scalars(select(User).where(User.name == "ada")).one()
        outcomes = notebook_submissions.submit_course_notebook(
            session=session, user=ada, course=session.get_one(Course, notebook_course),
            name="Week 1", raw=TWO_PROBLEMS, max_source_bytes=1 << 20, max_queued=10,
            max_submits_per_hour=None, client_key="week-1",
        )  # fmt: skip
        return [o.submission.id if o.submission else None for o in outcomes]

    def first_commits(state: ORMExecuteState) -> None:
        if state.is_update and first.in_transaction():  # the retry's lock on the learner
            first.commit()

    with Session(engine()) as first, Session(engine()) as retry:
        made = upload_in(first)
        # the retry has looked for the key (none committed yet); the first commits
        # just before the retry takes the learner's lock and inserts
        event.listen(retry, "do_orm_execute", first_commits)
        again = upload_in(retry)
        retry.commit()
    assert again == made and None not in made
    assert stored() == 2
