"""A course's grades through the API (app/api/grade_book_answers.py): computed once per
grade-book revision and served as that copy, with an ETag a client sends back for a 304;
any grade change (through the API, or a submit graded by a worker in another session)
is in the next read; access is checked on every read, copy or not."""

from __future__ import annotations

from datetime import datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.api.routes import courses as course_routes
from app.core.db import session_scope
from app.models import Course, Submission, User
from app.schemas.courses import GradeMatrix
from tests.app.conftest import BANK_SLUG, token_for


def _course(client: TestClient, teacher: dict[str, str], ada: dict[str, str]) -> int:
    made = client.post("/api/courses", json={"name": "JAX 101"}, headers=teacher).json()
    client.post("/api/courses/join", json={"code": made["join_code"]}, headers=ada)
    assigned = client.put(
        f"/api/courses/{made['id']}/assignments",
        json={"problem": BANK_SLUG, "opens_at": "2020-01-01T00:00:00Z", "max_points": 10},
        headers=teacher,
    )
    assert assigned.status_code == 200, assigned.text
    return int(made["id"])


def _graded_submit(name: str, score: float) -> None:
    """What a grading worker commits, in a session of its own."""
    now = datetime.now()
    with session_scope() as session:
        user = session.query(User).filter_by(name=name).one()
        done = {"status": "done", "verdict": "wrong_answer", "created_at": now, "finished_at": now}
        session.add(Submission(user_id=user.id, problem=BANK_SLUG, mode="submit", code="x\n",
                               score=score, **done))  # fmt: skip


def test_the_grades_are_computed_once_a_revision_and_a_change_is_in_the_next_read(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    teacher, ada = token_for("teacher", role="instructor"), token_for("ada")
    course_id = _course(client, teacher, ada)
    computed: list[int] = []
    compute = course_routes._grade_matrix

    def counted(session: Session, course: Course) -> GradeMatrix:
        computed.append(course.id)
        return compute(session, course)

    monkeypatch.setattr(course_routes, "_grade_matrix", counted)
    url = f"/api/courses/{course_id}/grades"

    first = client.get(url, headers=teacher)
    assert first.status_code == 200, first.text
    assert first.headers["cache-control"] == "private, no-cache"
    again = client.get(url, headers=teacher)
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    assert computed == [course_id]

    unchanged = client.get(url, headers=teacher | {"If-None-Match": first.headers["etag"]})
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["etag"] == first.headers["etag"]
    other_tag = client.get(url, headers=teacher | {"If-None-Match": '"something-else"'})
    assert other_tag.status_code == 200 and other_tag.content == first.content

    _graded_submit("ada", 0.5)  # a worker's commit
    graded = client.get(url, headers=teacher | {"If-None-Match": first.headers["etag"]})
    assert graded.status_code == 200 and graded.headers["etag"] != first.headers["etag"]
    (cell,) = graded.json()["learners"][0]["cells"]
    assert (cell["attempts"], cell["points"]) == (1, 5.0)

    ada_id = graded.json()["learners"][0]["learner_id"]
    overridden = client.put(
        f"/api/courses/{course_id}/learners/{ada_id}/problems/{BANK_SLUG}/override",
        json={"points": 8, "reason": "oral exam"},
        headers=teacher,
    )
    assert overridden.status_code == 200, overridden.text
    (cell,) = client.get(url, headers=teacher).json()["learners"][0]["cells"]
    assert (cell["points"], cell["override_reason"]) == (8.0, "oral exam")
    assert computed == [course_id] * 3


def test_a_kept_copy_is_no_way_past_the_access_check(client: TestClient) -> None:
    teacher, ada = token_for("teacher", role="instructor"), token_for("ada")
    course_id = _course(client, teacher, ada)
    url = f"/api/courses/{course_id}/grades"
    kept = client.get(url, headers=teacher)
    assert kept.status_code == 200
    tag = {"If-None-Match": kept.headers["etag"]}
    assert client.get(url, headers=ada | tag).status_code == 403  # a learner of the course
    assert client.get(url, headers=token_for("eve") | tag).status_code == 404  # not a member
    assert client.get(url, headers=tag).status_code == 401


def test_a_client_that_accepts_gzip_gets_the_grades_compressed_under_a_tag_of_their_own(
    client: TestClient,
) -> None:
    teacher, ada = token_for("teacher", role="instructor"), token_for("ada")
    course_id = _course(client, teacher, ada)
    url = f"/api/courses/{course_id}/grades"
    plain = client.get(url, headers=teacher | {"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    zipped = client.get(url, headers=teacher | {"Accept-Encoding": "br;q=1.0, gzip;q=0.8"})
    assert zipped.headers["content-encoding"] == "gzip"  # httpx decoded it
    assert zipped.json() == plain.json() and zipped.headers["vary"] == "Accept-Encoding"
    assert zipped.headers["etag"] != plain.headers["etag"]
    refused = client.get(url, headers=teacher | {"Accept-Encoding": "gzip;q=0"})
    assert "content-encoding" not in refused.headers
    for tag in (plain.headers["etag"], zipped.headers["etag"], "W/" + plain.headers["etag"]):
        again = client.get(url, headers=teacher | {"If-None-Match": f'"other", {tag}'})
        assert again.status_code == 304, tag
