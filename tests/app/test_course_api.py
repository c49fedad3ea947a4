"""The instructor's JSON API, used as a script would with personal API tokens: a course
from creation to a grade export and a regrade, on SQLite and PostgreSQL. Who may call
what is tests/app/test_authorization.py's table."""

from __future__ import annotations

from datetime import date, datetime

from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.models import Submission, User
from tests.app.conftest import BANK_SLUG, token_for

YEAR = date.today().year + 1  # a due date in the future whenever the test runs


def _graded(learner: str, *, verdict: str, score: float, when: datetime) -> int:
    """A submit the worker graded (before problems had versions: a regrade has work)."""
    with session_scope() as session:
        user = session.query(User).filter_by(name=learner).one()
        row = Submission(
            user_id=user.id,
            problem=BANK_SLUG,
            mode="submit",
            code="def f(): ...",
            status="done",
            verdict=verdict,
            score=score,
            created_at=when,
            finished_at=when,
        )
        session.add(row)
        session.flush()
        return row.id


def test_a_course_from_creation_to_grade_export_and_regrade(client: TestClient) -> None:
    teacher = token_for("teacher", role="instructor")
    ada = token_for("ada")

    made = client.post("/api/courses", json={"name": "Deep learning 101"}, headers=teacher)
    assert made.status_code == 201, made.text
    course = made.json()
    assert course["role"] == "instructor" and len(course["join_code"]) >= 4
    cid = course["id"]

    joined = client.post("/api/courses/join", json={"code": course["join_code"]}, headers=ada)
    assert joined.status_code == 200 and joined.json()["role"] == "learner"
    assert joined.json()["join_code"] is None  # learners never see it
    assert client.get(f"/api/courses/{cid}/grades", headers=ada).status_code == 403

    due = client.put(
        f"/api/courses/{cid}/assignments",
        json={"problem": BANK_SLUG, "due_at": f"{YEAR}-12-01T23:59:00+01:00"},
        headers=teacher,
    )
    assert due.status_code == 200, due.text
    assert due.json()["due_at"].startswith(f"{YEAR}-12-01T22:59:00")  # kept in UTC
    unknown = client.put(
        f"/api/courses/{cid}/assignments", json={"problem": "no-such"}, headers=teacher
    )
    assert unknown.status_code == 404

    members = client.get(f"/api/courses/{cid}/members", headers=teacher).json()
    assert [(m["name"], m["role"]) for m in members["data"]] == [
        ("teacher", "instructor"),
        ("ada", "learner"),
    ]
    ada_id = next(m["id"] for m in members["data"] if m["name"] == "ada")

    on_time = _graded("ada", verdict="wrong_answer", score=0.5, when=datetime(YEAR, 11, 30))
    late = _graded("ada", verdict="accepted", score=1.0, when=datetime(YEAR, 12, 2))

    grades = client.get(f"/api/courses/{cid}/grades", headers=teacher).json()
    (row,) = grades["learners"]
    (cell,) = row["cells"]
    assert (row["learner"], cell["problem"], cell["attempts"]) == ("ada", BANK_SLUG, 2)
    assert cell["late"] is True

    as_csv = client.get(f"/api/courses/{cid}/grades.csv", headers=teacher)
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert as_csv.text.startswith("\ufeffuser,")  # as the dashboard serves it
    assert as_csv.text.splitlines()[1].startswith("ada,")
    subs = client.get(f"/api/courses/{cid}/submissions.csv", headers=teacher).text
    assert len(subs.strip().splitlines()) == 3  # a header and two submits

    timeline = client.get(f"/api/courses/{cid}/learners/{ada_id}/timeline", headers=teacher)
    assert [e["submission_id"] for e in timeline.json()["data"]] == [late, on_time]
    assert [e["late"] for e in timeline.json()["data"]] == [True, False]

    started = client.post(
        f"/api/courses/{cid}/problems/{BANK_SLUG}/regrades", json={"version": 1}, headers=teacher
    )
    assert started.status_code == 201, started.text
    regrade = started.json()
    assert (regrade["status"], regrade["done"], regrade["total"]) == ("running", 0, 2)
    again = client.post(
        f"/api/courses/{cid}/problems/{BANK_SLUG}/regrades", json={"version": 1}, headers=teacher
    )
    assert again.status_code == 409 and "apply or discard it first" in again.json()["detail"]
    progress = client.get(f"/api/courses/{cid}/regrades/{regrade['id']}", headers=teacher).json()
    assert {c["submission_id"] for c in progress["changes"]} == {on_time, late}
    discarded = client.post(f"/api/courses/{cid}/regrades/{regrade['id']}/discard", headers=teacher)
    assert discarded.json()["status"] == "discarded"

    listed = client.get("/api/courses", headers=ada).json()
    assert [c["name"] for c in listed["data"]] == ["Deep learning 101"]


def test_every_instructor_route_is_typed_in_openapi(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path, method, schema in [
        ("/api/courses", "get", "CoursesPublic"),
        ("/api/courses/{course_id}/grades", "get", "GradeMatrix"),
        ("/api/courses/{course_id}/learners/{learner_id}/timeline", "get", "Timeline"),
        ("/api/courses/{course_id}/regrades/{regrade_id}", "get", "RegradePublic"),
    ]:
        answer = paths[path][method]["responses"]["200"]["content"]["application/json"]
        assert answer["schema"]["$ref"].endswith(f"/{schema}")
    assert (
        "text/csv"
        in paths["/api/courses/{course_id}/grades.csv"]["get"]["responses"]["200"]["content"]
    )


def test_guessing_join_codes_is_throttled_per_account_and_per_address(client: TestClient) -> None:
    teacher = token_for("teacher", role="instructor")
    code = client.post("/api/courses", json={"name": "C"}, headers=teacher).json()["join_code"]
    guesser, other = token_for("guesser"), token_for("other")
    for attempt in range(10):
        wrong = client.post(
            "/api/courses/join", json={"code": f"WRONG{attempt:03d}"}, headers=guesser
        )
        assert wrong.status_code == 400, wrong.text
    refused = client.post("/api/courses/join", json={"code": code}, headers=guesser)
    assert refused.status_code == 429  # even the right code, while throttled (like a password)
    assert int(refused.headers["Retry-After"]) > 0
    assert "too many wrong join codes" in refused.json()["detail"]
    # Another account from the same address: its own ten, until the address has had twenty.
    assert client.post("/api/courses/join", json={"code": code}, headers=other).status_code == 200
    for attempt in range(10):
        client.post("/api/courses/join", json={"code": f"OTHER{attempt:03d}"}, headers=other)
    third = token_for("third")
    assert client.post("/api/courses/join", json={"code": code}, headers=third).status_code == 429
