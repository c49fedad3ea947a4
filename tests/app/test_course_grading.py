"""The grading view (app/web/course_grading_view.py, app/reports/grading_view.py) and
comments anchored to lines (app/data/comments.py): the learners' queue, rubric toggles
that only ever change their own item, line comments validated against the code, who
may open what, and what the learner reads of it on their problem page."""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import (
    accounts,
    api_tokens,
    assignments,
    comments,
    courses,
    members,
    rubrics,
    web_sessions,
)
from app.errors import InvalidInputError
from app.models import Course, RubricApplication, Submission, SubmissionComment, User, utcnow
from app.server.main import create_app
from app.vocabulary import MemberRole
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import CaseReport, GradeReport, PartReport
from tests.app.test_authorization import session_cookie

SLUG = "stable-logsumexp"
CODE = (
    "import jax.numpy as jnp\n\n\n"
    "def logsumexp_and_softmax(logits):\n"
    "    top = logits.max(axis=-1, keepdims=True)\n"
    "    return top, logits - top\n"
)  # six lines


@dataclass
class World:
    course: int
    items: list[int]
    ada: dict[str, int]  # her submissions: wrong, accepted
    bob: int
    base: str


def _submit(session: object, user: User, verdict: Verdict, score: float, minutes: int) -> int:
    report = GradeReport(
        problem=SLUG, mode=Mode.SUBMIT, verdict=verdict, score=score,
        cases=[CaseReport(name="h1", hidden=True, verdict=verdict)],
        parts=[PartReport(name=name, entry_point=f"{name}_fn", weight=1.0, verdict=verdict,
                          passed=1, total=2, score=0.5) for name in ("init", "apply")],
    )  # fmt: skip
    row = Submission(user_id=user.id, problem=SLUG, code=CODE, mode="submit", status="done",
                     verdict=verdict, score=score, result_json=json.dumps(report.to_json()),
                     created_at=utcnow() + timedelta(minutes=minutes))  # fmt: skip
    session.add(row)  # type: ignore[attr-defined]
    session.flush()  # type: ignore[attr-defined]
    return row.id


@pytest.fixture
def world(sqlite_database: str) -> World:
    """A course with one assignment of 10 points and two rubric items; ada submitted a
    wrong answer, then an accepted one; bob a half-right one; cy nothing. ta is the
    course's teaching assistant; eve a learner of it; olga another course's instructor."""
    with session_scope() as session:
        # No passwords: the tests sign in with sessions made directly (hashing is slow).
        made = {
            name: accounts.new_account_without_password(session=session, name=name, role=role)
            for name, role in [
                ("teacher", "instructor"), ("ta", "learner"), ("ada", "learner"),
                ("bob", "learner"), ("cy", "learner"), ("olga", "instructor"),
            ]
        }  # fmt: skip
        course = courses.create_course(session=session, name="JAX 101", instructor=made["teacher"])
        courses.create_course(session=session, name="Other", instructor=made["olga"])
        assignment = assignments.assign(session=session, course=course, problem=SLUG, due_at=None)
        for name in ("ada", "bob", "cy"):
            members.add(session=session, course=course, user=made[name], role=MemberRole.LEARNER)
        members.add(
            session=session, course=course, user=made["ta"], role=MemberRole.TEACHING_ASSISTANT
        )
        ada = {
            "wrong": _submit(session, made["ada"], Verdict.WRONG_ANSWER, 0.0, 1),
            "accepted": _submit(session, made["ada"], Verdict.ACCEPTED, 1.0, 2),
        }
        bob = _submit(session, made["bob"], Verdict.WRONG_ANSWER, 0.5, 3)
        items = [
            rubrics.add_item(session=session, course=course, assignment=assignment,
                             points=points, description=words, by=made["teacher"]).id
            for points, words in ((-2, "Loops over the batch"), (1, "Clear names"))
        ]  # fmt: skip
        return World(course.id, items, ada, bob, f"/courses/{course.id}/assignments/{SLUG}/grading")


def _user(session: Session, name: str) -> User:
    return session.scalars(select(User).where(User.name == name)).one()


@pytest.fixture(scope="module")
def app() -> FastAPI:
    """One app for the module (each costs seconds to build; the database is each test's)."""
    return create_app(workers=0, prepare=False)


def signed_in(app: FastAPI, name: str) -> tuple[TestClient, str]:
    """A browser signed in as ``name`` and its form token (a session made directly: the
    sign-in form's password hashing costs seconds on a busy machine)."""
    csrf = secrets.token_urlsafe(16)
    with session_scope() as session:
        sid = web_sessions.start(session=session, user=_user(session, name))
    client = TestClient(app)
    client.cookies.set("jaxjudge_session", session_cookie(sid, csrf))
    return client, csrf


def test_a_comment_anchors_only_to_lines_of_the_code(app: FastAPI, world: World) -> None:
    with session_scope() as session:
        course = session.get_one(Course, world.course)
        submission = session.get_one(Submission, world.bob)
        teacher = _user(session, "teacher")
        for start, end in ((0, 1), (3, 2), (1, 7), (2, None), (None, 2)):
            with pytest.raises(InvalidInputError, match="line"):
                comments.add(session=session, course=course, submission=submission,
                             author=teacher, body="x", line_start=start, line_end=end)  # fmt: skip
        made = comments.add(session=session, course=course, submission=submission,
                            author=teacher, body="Both lines", line_start=5, line_end=6)  # fmt: skip
        assert (made.line_start, made.line_end) == (5, 6)
        assert comments.line_count(CODE) == 6

    ta, token = signed_in(app, "ta")
    url = f"{world.base}/{world.bob}/comments"
    refused = ta.post(
        url, data={"body": "No", "line_start": "6", "line_end": "9", "csrf_token": token}
    )
    assert refused.status_code == 400
    assert "its lines are 1 to 6" in refused.text
    assert (
        ta.post(url, data={"body": "No", "line_start": "two", "csrf_token": token}).status_code
        == 400
    )
    one = ta.post(url, data={"body": "Off by one", "line_start": "5", "csrf_token": token},
                  follow_redirects=False)  # fmt: skip
    assert one.status_code == 303 and "#comment-" in one.headers["location"]
    with session_scope() as session:
        rows = session.scalars(
            select(SubmissionComment).where(SubmissionComment.submission_id == world.bob)
        ).all()
        assert [(c.body, c.line_start, c.line_end) for c in rows] == [
            ("Both lines", 5, 6), ("Off by one", 5, 5)
        ]  # fmt: skip
        # A comment is grading by hand: the submission is graded by its first commenter.
        assert (
            rubrics.gradings(session=session, submission_ids=[world.bob])[world.bob].graded_by_name
            == "ta"
        )

    # The API lists each comment with its anchor, and takes one.
    with session_scope() as session:
        bearer = api_tokens.create(session=session, user=_user(session, "ta"))[0]
    headers = {"Authorization": f"Bearer {bearer}"}
    api = f"/api/courses/{world.course}/submissions/{world.bob}/comments"
    posted = ta.post(api, json={"body": "Line 1", "line_start": 1, "line_end": 1}, headers=headers)
    assert posted.status_code == 201 and posted.json()["line_start"] == 1
    assert (
        ta.post(
            api, json={"body": "x", "line_start": 0, "line_end": 1}, headers=headers
        ).status_code
        == 400
    )
    listed = ta.get(api, headers=headers).json()["data"]
    assert [(c["line_start"], c["line_end"]) for c in listed] == [(5, 6), (5, 5), (1, 1)]


def test_the_queue_lists_every_learner_with_the_submission_to_grade(
    app: FastAPI, world: World
) -> None:
    teacher, _token = signed_in(app, "teacher")
    page = teacher.get(world.base)
    assert page.status_code == 200
    rows = {
        name: row
        for name, row in re.findall(r'<th scope="row">(\w+)</th>(.*?)</tr>', page.text, re.S)
    }
    assert set(rows) == {"ada", "bob", "cy"}
    # ada's accepted submission, not her earlier wrong one; cy has nothing to grade.
    assert f"grading/{world.ada['accepted']}" in rows["ada"]
    assert f"grading/{world.ada['wrong']}" not in rows["ada"]
    assert "nothing submitted" in rows["cy"]
    assert ">5<" in rows["bob"]  # half of 10 points, automatically


def test_the_grading_page_shows_numbered_highlighted_code_and_the_keys(
    app: FastAPI, world: World
) -> None:
    teacher, token = signed_in(app, "teacher")
    url = f"{world.base}/{world.bob}"
    teacher.post(f"{url}/comments", data={"body": "Subtract in a stable way", "line_start": "5",
                                          "line_end": "6", "csrf_token": token})  # fmt: skip
    page = teacher.get(url).text
    assert '<tr id="L6"' in page and '<tr id="L7"' not in page
    assert '<span class="k">def</span>' in page  # Pygments, on the server
    assert "on lines 5\u20136" in page and "Subtract in a stable way" in page
    assert 'class="commented"' in page
    for key in ("<kbd>j</kbd>", "<kbd>k</kbd>", "<kbd>c</kbd>", "<kbd>?</kbd>"):
        assert key in page
    # Learners in name order: ada before bob, no one after (cy has nothing).
    assert f'id="previous-learner" rel="prev" href="{world.base}/{world.ada["accepted"]}"' in page
    assert 'id="next-learner"' not in page
    assert "/static/grading.js" in page
    # The automatic verdict per part.
    assert "<td>init (<code>init_fn</code>)</td>" in page and "apply_fn" in page


def test_toggles_are_idempotent_and_two_graders_keep_both_items(app: FastAPI, world: World) -> None:
    url = f"{world.base}/{world.bob}"
    ta, ta_token = signed_in(app, "ta")
    teacher, teacher_token = signed_in(app, "teacher")
    first, second = world.items
    # Both loaded the page with nothing applied; each presses a different item.
    assert ta.post(f"{url}/items/{first}", data={"applied": "yes", "csrf_token": ta_token},
                   follow_redirects=False).status_code == 303  # fmt: skip
    state = teacher.post(
        f"{url}/items/{second}",
        data={"applied": "yes", "csrf_token": teacher_token},
        headers={"Accept": "application/json"},
    ).json()
    assert [(i["id"], i["applied"], i["applied_by"]) for i in state["items"]] == [
        (first, True, "ta"), (second, True, "teacher")
    ]  # fmt: skip
    assert state["manual_points"] == -1 and state["combined_points"] == 4  # 5 - 2 + 1
    assert state["graded_by"] == "ta"
    # The teacher's stale page still offers to apply the first: applying twice is once.
    again = teacher.post(f"{url}/items/{first}", data={"applied": "yes", "csrf_token": teacher_token},
                         headers={"Accept": "application/json"}).json()  # fmt: skip
    assert [i["applied_by"] for i in again["items"]] == ["ta", "teacher"]
    with session_scope() as session:
        rows = session.scalars(
            select(RubricApplication).where(RubricApplication.submission_id == world.bob)
        ).all()
        assert sorted(r.item_id for r in rows) == [first, second]
    # Taking off twice is once too, and a malformed state changes nothing.
    for _ in range(2):
        ta.post(f"{url}/items/{second}", data={"applied": "no", "csrf_token": ta_token})
    assert (
        ta.post(
            f"{url}/items/{first}", data={"applied": "maybe", "csrf_token": ta_token}
        ).status_code
        == 400
    )
    page = ta.get(url).text
    assert page.count('aria-pressed="true"') == 1 and "applied by ta" in page
    # An item of no assignment here, or a submission of another problem: not found.
    assert (
        ta.post(f"{url}/items/999999", data={"applied": "yes", "csrf_token": ta_token}).status_code
        == 404
    )
    assert (
        ta.get(f"/courses/{world.course}/assignments/optax-multisteps/grading").status_code == 404
    )


def test_an_instructors_change_of_points_reaches_the_graders_next_answer(
    app: FastAPI, world: World
) -> None:
    url = f"{world.base}/{world.ada['accepted']}"
    ta, ta_token = signed_in(app, "ta")
    first, second = world.items
    ta.post(f"{url}/items/{first}", data={"applied": "yes", "csrf_token": ta_token})
    with session_scope() as session:
        course = session.get_one(Course, world.course)
        teacher = _user(session, "teacher")
        rubrics.change_item(session=session, course=course, item_id=first, points=-3,
                            description="Loops over the batch", by=teacher)  # fmt: skip
    state = ta.post(f"{url}/items/{second}", data={"applied": "yes", "csrf_token": ta_token},
                    headers={"Accept": "application/json"}).json()  # fmt: skip
    assert state["items"][0]["points"] == -3
    assert state["combined_points"] == 8  # 10 - 3 + 1
    assert "-3" in ta.get(url).text


def test_only_the_courses_staff_open_the_grading_view(app: FastAPI, world: World) -> None:
    pages = [world.base, f"{world.base}/{world.bob}"]
    for name, status in (("ada", 403), ("olga", 404)):
        client, token = signed_in(app, name)
        for path in pages:
            assert client.get(path).status_code == status, (name, path)
        posted = client.post(f"{pages[1]}/items/{world.items[0]}",
                             data={"applied": "yes", "csrf_token": token})  # fmt: skip
        assert posted.status_code == status
    ta, _token = signed_in(app, "ta")
    assert all(ta.get(path).status_code == 200 for path in pages)
    # Without the form's token nothing changes.
    assert ta.post(f"{pages[1]}/graded", data={"csrf_token": "forged"}).status_code == 403
    with session_scope() as session:
        assert rubrics.gradings(session=session, submission_ids=[world.bob]) == {}


def test_the_learner_reads_the_items_the_comments_beside_their_lines_and_the_score(
    app: FastAPI, world: World
) -> None:
    ta, token = signed_in(app, "ta")
    url = f"{world.base}/{world.bob}"
    ta.post(f"{url}/items/{world.items[0]}", data={"applied": "yes", "csrf_token": token})
    ta.post(f"{url}/comments", data={"body": "Why subtract here?", "line_start": "6",
                                     "csrf_token": token})  # fmt: skip
    bob, _token = signed_in(app, "bob")
    page = bob.get(f"/problems/{SLUG}").text
    assert "Loops over the batch" in page and "-2" in page
    assert "3 of 10 points" in page  # 5 automatic - 2
    line_six = re.search(rf'<tr id="s{world.bob}-L6".*?</tr>', page, re.S)
    assert line_six and "Why subtract here?" in line_six.group(0)
    # Ada's page shows no rubric of bob's.
    ada, _token = signed_in(app, "ada")
    assert "Loops over the batch" not in ada.get(f"/problems/{SLUG}").text


def test_the_timeline_links_each_submission_to_its_grading_page(app: FastAPI, world: World) -> None:
    teacher, _token = signed_in(app, "teacher")
    with session_scope() as session:
        bob_id = _user(session, "bob").id
    page = teacher.get(f"/courses/{world.course}/learners/{bob_id}").text
    assert f'href="{world.base}/{world.bob}">Grade #{world.bob} in the grading view</a>' in page


def test_a_teaching_assistant_applies_items_but_cannot_change_them(
    app: FastAPI, world: World
) -> None:
    ta, token = signed_in(app, "ta")
    rubric = f"/courses/{world.course}/assignments/{SLUG}/rubric/{world.items[0]}"
    changed = ta.post(rubric, data={"points": "5", "description": "x", "csrf_token": token})
    assert changed.status_code == 403
    assert "Change the rubric" not in ta.get(f"{world.base}/{world.bob}").text
    with session_scope() as session:
        assignment = assignments.assigned(
            session=session, course=session.get_one(Course, world.course), slug=SLUG
        )
        assert [i.points for i in rubrics.items(session=session, assignment=assignment)] == [-2, 1]
    teacher, _token = signed_in(app, "teacher")
    assert "Change the rubric" in teacher.get(f"{world.base}/{world.bob}").text
