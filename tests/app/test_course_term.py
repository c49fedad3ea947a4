"""A term of a course through the JSON API and the pages, on SQLite and PostgreSQL:
windows (work before joining counts), extensions (one, a group's, a CSV that is all
or nothing), late penalties in raw and final scores, overrides with their audit,
comments the learner reads, teaching assistants, members removed and added back,
unassigning, grade exports in three layouts, a similarity report."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta

from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.models import LtiAccount, LtiContext, LtiPlatform, Submission, User, utcnow
from app.reports import similarity_runs
from app.vocabulary import IdSource
from tests.app.conftest import BANK_SLUG, sign_in
from tests.app.conftest import token_for as new_account

_tokens: dict[str, dict[str, str]] = {}


def token_for(name: str, role: str = "learner") -> dict[str, str]:
    """The account's bearer header, made on first use (each test has a fresh database)."""
    with session_scope() as session:
        exists = session.query(User).filter_by(name=name).one_or_none()
    if exists is None or name not in _tokens:
        _tokens[name] = new_account(name, role)
    return _tokens[name]


CODE = "def f(x):\n    total = x.sum()\n    return total * 2\n"


def graded(learner: str, *, score: float, when: datetime, code: str = CODE) -> int:
    with session_scope() as session:
        user = session.query(User).filter_by(name=learner).one()
        row = Submission(user_id=user.id, problem=BANK_SLUG, mode="submit", code=code,
                         status="done", verdict="accepted" if score == 1.0 else "wrong_answer",
                         score=score, created_at=when, finished_at=when)  # fmt: skip
        session.add(row)
        session.flush()
        return row.id


def course_with(client: TestClient, *learners: str) -> tuple[int, dict[str, str]]:
    teacher = token_for("teacher", role="instructor")
    made = client.post("/api/courses", json={"name": "Term"}, headers=teacher).json()
    for name in learners:
        client.post("/api/courses/join", json={"code": made["join_code"]}, headers=token_for(name))
    return made["id"], teacher


def cells(client: TestClient, cid: int, teacher: dict[str, str]) -> dict[str, dict[str, object]]:
    grades = client.get(f"/api/courses/{cid}/grades", headers=teacher).json()
    return {
        row["learner"]: row["cells"][0] | {"total": row["total_points"]}
        for row in grades["learners"]
    }


def test_work_made_before_joining_counts_when_it_is_inside_the_window(client: TestClient) -> None:
    token_for("ada")
    opened = utcnow() - timedelta(days=2)
    before_opening = graded("ada", score=1.0, when=opened - timedelta(days=1))
    cid, teacher = course_with(client)
    assigned = client.put(f"/api/courses/{cid}/assignments", headers=teacher,
                          json={"problem": BANK_SLUG, "opens_at": opened.isoformat()})  # fmt: skip
    assert assigned.status_code == 200, assigned.text
    in_window = graded("ada", score=1.0, when=opened + timedelta(hours=1))  # still not a member
    code = client.get(f"/api/courses/{cid}", headers=teacher).json()["join_code"]
    client.post("/api/courses/join", json={"code": code}, headers=token_for("ada"))
    timeline = client.get(f"/api/courses/{cid}/learners/{_id('ada')}/timeline", headers=teacher)
    assert [(e["submission_id"], e["counts"]) for e in timeline.json()["data"]] == [
        (in_window, True)
    ]
    assert before_opening not in {e["submission_id"] for e in timeline.json()["data"]}
    assert cells(client, cid, teacher)["ada"]["status"] == "solved"


def _id(name: str) -> int:
    with session_scope() as session:
        return session.query(User).filter_by(name=name).one().id


def test_a_due_date_in_the_past_needs_confirming(client: TestClient) -> None:
    cid, teacher = course_with(client)
    past = (utcnow() - timedelta(days=1)).isoformat()
    body = {
        "problem": BANK_SLUG,
        "opens_at": (utcnow() - timedelta(days=5)).isoformat(),
        "due_at": past,
    }
    refused = client.put(f"/api/courses/{cid}/assignments", json=body, headers=teacher)
    assert refused.status_code == 409 and "in the past" in refused.json()["detail"]
    confirmed = client.put(
        f"/api/courses/{cid}/assignments", json=body | {"confirm_past_due": True}, headers=teacher
    )
    assert confirmed.status_code == 200


def test_a_penalty_shows_raw_and_final_scores_and_an_extension_lifts_it(client: TestClient) -> None:
    cid, teacher = course_with(client, "ada", "bob", "cy")
    due = utcnow() - timedelta(days=3)
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={
        "problem": BANK_SLUG, "opens_at": (due - timedelta(days=10)).isoformat(),
        "due_at": due.isoformat(), "confirm_past_due": True, "late_policy": "penalty",
        "penalty_percent": 20, "penalty_unit": "day", "penalty_floor_percent": 50, "max_points": 5,
    })  # fmt: skip
    for name in ("ada", "bob", "cy"):
        graded(name, score=1.0, when=due + timedelta(days=1, hours=1))  # two started days late
    found = cells(client, cid, teacher)
    assert (found["ada"]["best_score"], found["ada"]["final_score"], found["ada"]["points"]) == (
        1.0, 0.6, 3.0,
    )  # fmt: skip
    with session_scope() as session:  # cy is in a group that gets an extension
        from app.models import CourseMember

        session.query(CourseMember).filter_by(user_id=_id("cy")).one().group_name = "DRC"
    granted = client.post(f"/api/courses/{cid}/extensions", headers=teacher, json={"data": [
        {"problem": BANK_SLUG, "user": "bob", "due_at": (due + timedelta(days=2)).isoformat()},
        {"problem": BANK_SLUG, "group": "DRC", "due_at": (due + timedelta(days=2)).isoformat()},
    ]})  # fmt: skip
    assert granted.status_code == 201, granted.text
    found = cells(client, cid, teacher)
    assert [found[n]["final_score"] for n in ("ada", "bob", "cy")] == [0.6, 1.0, 1.0]
    (mine,) = client.get(f"/api/courses/{cid}", headers=token_for("ada")).json()["standing"]
    assert (mine["status"], mine["points"], mine["max_points"]) == ("late", 3.0, 5.0)
    (theirs,) = client.get(f"/api/courses/{cid}", headers=token_for("bob")).json()["standing"]
    assert (theirs["status"], theirs["extended"], theirs["points"]) == ("solved", True, 5.0)
    assert found["bob"]["extended"] is True and found["bob"]["late"] is False
    rows = list(
        csv.reader(
            io.StringIO(
                client.get(f"/api/courses/{cid}/grades.csv", headers=teacher).text.lstrip("\ufeff")
            )
        )
    )
    assert rows[0][4:6] == [f"{BANK_SLUG} raw", f"{BANK_SLUG} final"]
    assert rows[1][0] == "ada" and rows[1][4:6] == ["5", "3"] and rows[1][-1] == "3"
    # A policy change recomputes at once.
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={
        "problem": BANK_SLUG, "due_at": due.isoformat(), "confirm_past_due": True, "max_points": 5,
    })  # fmt: skip
    assert cells(client, cid, teacher)["ada"]["final_score"] == 1.0


def test_an_extensions_csv_changes_nothing_until_every_row_is_good(client: TestClient) -> None:
    cid, teacher = course_with(client, "ada", "bob")
    client.put(f"/api/courses/{cid}/assignments", headers=teacher,
               json={"problem": BANK_SLUG, "due_at": "2031-01-01T00:00:00"})  # fmt: skip
    bad = (
        "user,problem,due_at\n"
        f"ada,{BANK_SLUG},2031-02-01T00:00\n"
        f"nobody,{BANK_SLUG},2031-02-01T00:00\n"
        "bob,not-a-problem,2031-02-01T00:00\n"
        f"bob,{BANK_SLUG},next tuesday\n"
    )
    refused = client.post(f"/api/courses/{cid}/extensions.csv", content=bad, headers=teacher)
    assert refused.status_code == 400
    message = refused.json()["detail"]
    assert message.startswith("Nothing was changed.")
    assert all(f"row {n}" in message for n in (3, 4, 5)) and "row 2" not in message
    assert client.get(f"/api/courses/{cid}/extensions", headers=teacher).json()["count"] == 0
    good = "\ufeffuser,problem,due_at\n" + f"ada,{BANK_SLUG},2031-02-01T00:00+01:00\n"
    made = client.post(f"/api/courses/{cid}/extensions.csv", content=good, headers=teacher)
    assert made.status_code == 201, made.text
    assert made.json()["data"][0]["due_at"].startswith("2031-01-31T23:00")


def test_overrides_need_a_reason_and_are_audited_and_comments_reach_the_learner(
    client: TestClient,
) -> None:
    cid, teacher = course_with(client, "ada")
    ta = token_for("tess")
    assert client.post(f"/api/courses/{cid}/members", json={"user": "tess", "role": "ta"},
                       headers=teacher).status_code == 201  # fmt: skip
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={"problem": BANK_SLUG})
    sid = graded("ada", score=0.5, when=utcnow())
    url = f"/api/courses/{cid}/learners/{_id('ada')}/problems/{BANK_SLUG}/override"
    assert client.put(url, json={"points": 9, "reason": ""}, headers=ta).status_code == 422
    assert client.put(url, json={"points": 11, "reason": "x"}, headers=ta).status_code == 400
    made = client.put(url, json={"points": 9, "reason": "graded the plot by hand"}, headers=ta)
    assert made.status_code == 200, made.text
    assert (made.json()["old_score"], made.json()["score"]) == (0.5, 0.9)
    assert cells(client, cid, teacher)["ada"]["override_reason"] == "graded the plot by hand"
    audit = client.get(f"/api/courses/{cid}/overrides.csv", headers=ta).text
    assert "tess" in audit and "graded the plot by hand" in audit and "0.5000,0.9000" in audit
    # TAs grade but do not run the course.
    assert client.post(f"/api/courses/{cid}/members", json={"user": "ada", "role": "ta"},
                       headers=ta).status_code == 403  # fmt: skip
    assert client.put(f"/api/courses/{cid}/assignments", json={"problem": BANK_SLUG},
                      headers=ta).status_code == 403  # fmt: skip
    said = client.post(f"/api/courses/{cid}/submissions/{sid}/comments",
                       json={"body": "Sum over the batch axis only."}, headers=ta)  # fmt: skip
    assert said.status_code == 201
    own = client.get(f"/api/submissions/{sid}", headers=token_for("ada")).json()
    assert [(c["author_name"], c["body"]) for c in own["comments"]] == [
        ("tess", "Sum over the batch axis only.")
    ]
    page_client = client
    # The staff timeline: points everywhere the grade table shows points, one control per
    # action, the code highlighted.
    page_client.cookies.clear()
    sign_in(page_client, "tess")
    staff = page_client.get(f"/courses/{cid}/learners/{_id('ada')}").text
    row = re.search(r'<ul class="audit"><li>(.*?)</li>', staff, re.S)
    assert row and "5 → 9 points (of 10)" in row[1] and "(of 1)" not in staff
    assert "</span> · 5 of 10 points" in staff  # the submission's row, after its verdict
    assert '<details class="control"><summary>Override (set)</summary>' in staff
    assert '<details class="control"><summary>Add a comment</summary>' in staff
    assert '<pre tabindex="0" class="highlight code"><code><span' in staff
    page_client.cookies.clear()
    sign_in(page_client, "ada")
    problem_page = page_client.get(f"/problems/{BANK_SLUG}").text
    assert "1 comment from course staff" in problem_page
    assert "Sum over the batch axis only." in problem_page


def test_members_removed_and_added_back_keep_their_grades(client: TestClient) -> None:
    cid, teacher = course_with(client, "ada")
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={"problem": BANK_SLUG})
    graded("ada", score=1.0, when=utcnow())
    ada = _id("ada")
    assert client.delete(f"/api/courses/{cid}/members/{ada}", headers=teacher).status_code == 204
    assert client.get(f"/api/courses/{cid}", headers=token_for("ada")).status_code == 404
    assert (
        client.post(
            f"/api/courses/{cid}/members", json={"user": "ada"}, headers=teacher
        ).status_code
        == 201
    )
    assert cells(client, cid, teacher)["ada"]["status"] == "solved"
    only = client.delete(f"/api/courses/{cid}/members/{_id('teacher')}", headers=teacher)
    assert only.status_code == 409  # a course keeps an instructor
    assert (
        client.delete(f"/api/courses/{cid}/assignments/{BANK_SLUG}", headers=teacher).status_code
        == 204
    )
    assert client.get(f"/api/courses/{cid}/grades", headers=teacher).json()["problems"] == []
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={"problem": BANK_SLUG})
    assert cells(client, cid, teacher)["ada"]["status"] == "solved"  # history was kept


def test_grade_exports_in_canvas_and_moodle_layouts(client: TestClient) -> None:
    cid, teacher = course_with(client, "ada")
    with session_scope() as session:
        user = session.query(User).filter_by(name="ada").one()
        user.display_name, user.email, user.student_id = "Ada Lovelace", "ada@uni.example", "S42"
        user.email_source = IdSource.VERIFIED  # an unverified email is no key (issue 39)
    client.put(f"/api/courses/{cid}/assignments", headers=teacher,
               json={"problem": BANK_SLUG, "max_points": 4})  # fmt: skip
    graded("ada", score=1.0, when=utcnow())
    canvas = list(
        csv.reader(
            io.StringIO(
                client.get(
                    f"/api/courses/{cid}/grades.csv?layout=canvas", headers=teacher
                ).text.lstrip("\ufeff")
            )
        )
    )
    assert canvas[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert canvas[1][0] == "Points Possible" and canvas[1][5] == "4"
    assert canvas[2][:6] == ["Ada Lovelace", "", "S42", "ada@uni.example", "", "4"]
    moodle = list(
        csv.reader(
            io.StringIO(
                client.get(
                    f"/api/courses/{cid}/grades.csv?layout=moodle", headers=teacher
                ).text.lstrip("\ufeff")
            )
        )
    )
    assert moodle[0][:4] == ["First name", "Last name", "ID number", "Email address"]
    assert moodle[1][:6] == ["Ada", "Lovelace", "S42", "ada@uni.example", "ada", "4"]
    assert (
        client.get(f"/api/courses/{cid}/grades.csv?layout=excel", headers=teacher).status_code
        == 400
    )


def _export(client: TestClient, path: str, teacher: dict[str, str]) -> list[list[str]]:
    answer = client.get(path, headers=teacher)
    assert answer.status_code == 200, answer.text
    return list(csv.reader(io.StringIO(answer.text.lstrip("\ufeff"))))


def test_an_id_two_learners_claim_is_exported_for_neither(client: TestClient) -> None:
    """Issue 37: bob set his student id and email to ada's on his account page, and the
    Canvas export had two rows with ada's SIS ids. Every key an LMS matches on names at
    most one row; the instructor's mapping and the LMS's email win over a claim."""
    cid, teacher = course_with(client, "ada", "bob", "cy")
    with session_scope() as session:
        for name, email, student_id in (
            ("ada", "ada@uni.example", "S42"),
            ("bob", "ADA@uni.example", "S42"),  # another case is the same address
            ("cy", "cy@uni.example", "S7"),
        ):
            user = session.query(User).filter_by(name=name).one()
            user.display_name, user.email, user.student_id = name.title(), email, student_id
            # ada and cy followed their verification links; bob never could (issue 39)
            user.email_source = IdSource.SELF_DECLARED if name == "bob" else IdSource.VERIFIED
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={"problem": BANK_SLUG})
    canvas = _export(client, f"/api/courses/{cid}/grades.csv?layout=canvas", teacher)
    sis = {row[0]: row[2:4] for row in canvas[2:]}
    assert sis == {"Ada": ["", "ada@uni.example"], "Bob": ["", ""], "Cy": ["S7", "cy@uni.example"]}
    moodle = _export(client, f"/api/courses/{cid}/grades.csv?layout=moodle", teacher)
    assert {row[4]: row[2:4] for row in moodle[1:]} == {
        "ada": ["", "ada@uni.example"], "bob": ["", ""], "cy": ["S7", "cy@uni.example"],
    }  # fmt: skip
    generic = _export(client, f"/api/courses/{cid}/grades.csv", teacher)
    assert {row[0]: (row[2], row[3]) for row in generic[1:]}["bob"] == ("", "")
    ids = _export(client, f"/api/courses/{cid}/grades-ids.csv", teacher)
    assert ids[0] == ["user", "display_name", "id", "value", "source", "exported"]
    assert ["ada", "Ada", "student id", "S42", "set by the learner (unverified)",
            "no: also held by bob"] in ids  # fmt: skip
    assert ["cy", "Cy", "email", "cy@uni.example", "verified by a mailed link",
            "yes"] in ids  # fmt: skip
    assert ["bob", "Bob", "email", "ADA@uni.example", "set by the learner (unverified)",
            "no: its owner has not verified it (a link is mailed when it is set)"] in ids  # fmt: skip
    browser = TestClient(client.app)
    sign_in(browser, "teacher")
    dashboard = browser.get(f"/courses/{cid}").text
    assert "Left blank in the grade exports" in dashboard
    assert "bob's student id <code>S42</code>, also held by ada" in dashboard
    assert (
        browser.get(f"/courses/{cid}/grades-ids.csv").text
        == "\ufeff" + "\r\n".join(",".join(row) for row in ids) + "\r\n"
    )

    # The instructor maps ada's student id; the LMS the course is linked to names her
    # email. Both are trusted: ada keeps them, bob's claims stay blank.
    mapped = client.post(f"/api/courses/{cid}/student-ids", content="user,student_id\nada,S42\n",
                         headers={**teacher, "Content-Type": "text/csv"})  # fmt: skip
    assert mapped.status_code == 200, mapped.text
    with session_scope() as session:
        platform = LtiPlatform(issuer="https://lms.example", client_id="c",
                               auth_login_url="https://lms.example/a",
                               token_url="https://lms.example/t", jwks_url="https://lms.example/k")  # fmt: skip
        session.add(platform)
        session.flush()
        session.add(LtiContext(platform_id=platform.id, context_id="ctx", course_id=cid,
                               deployment_id="d"))  # fmt: skip
        session.add(LtiAccount(platform_id=platform.id, sub="ada-sub", user_id=_id("ada"),
                               email="ada@uni.example"))  # fmt: skip
    canvas = _export(client, f"/api/courses/{cid}/grades.csv?layout=canvas", teacher)
    assert {row[0]: row[2:4] for row in canvas[2:]} == {
        "Ada": ["S42", "ada@uni.example"], "Bob": ["", ""], "Cy": ["S7", "cy@uni.example"],
    }  # fmt: skip
    ids = _export(client, f"/api/courses/{cid}/grades-ids.csv", teacher)
    assert ["ada", "Ada", "student id", "S42", "instructor's mapping",
            "yes: the trusted holder; withheld from bob"] in ids  # fmt: skip
    assert ["ada", "Ada", "email", "ada@uni.example", "LMS", "yes"] in ids  # fmt: skip
    assert ["bob", "Bob", "email", "ADA@uni.example", "set by the learner (unverified)",
            "no: its owner has not verified it (a link is mailed when it is set)"] in ids  # fmt: skip


def test_a_similarity_report_flags_a_renamed_copy(client: TestClient) -> None:
    cid, teacher = course_with(client, "ada", "bob", "cy")
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={"problem": BANK_SLUG})
    original = (
        "import jax.numpy as jnp\n\ndef step(params, batch, lr):\n"
        "    grads = jnp.mean(batch, axis=0) * params\n    scaled = grads * lr\n"
        "    updated = params - scaled\n    norm = jnp.sqrt(jnp.sum(updated ** 2))\n"
        "    return updated / jnp.maximum(norm, 1.0)\n"
    )
    copy = original.replace("grads", "g").replace("scaled", "s").replace("updated", "new")
    other = (
        "import jax\n\ndef step(p, b, lr):\n    def loss(q):\n        return (q * b).sum()\n"
        "    return jax.tree_util.tree_map(lambda a, d: a - lr * d, p, jax.grad(loss)(p))\n"
    )
    for name, code in (("ada", original), ("bob", "# mine\n" + copy), ("cy", other)):
        graded(name, score=1.0, when=utcnow(), code=code)
    started = client.post(f"/api/courses/{cid}/problems/{BANK_SLUG}/similarity",
                          json={"scope": "accepted"}, headers=teacher)  # fmt: skip
    assert started.status_code == 202, started.text
    similarity_runs.run(started.json()["id"])  # as the background thread does (idempotent)
    report = client.get(
        f"/api/courses/{cid}/similarity/{started.json()['id']}", headers=teacher
    ).json()
    assert report["status"] == "ready" and report["submissions"] == 3
    top = report["pairs"][0]
    assert {top["left_learner"], top["right_learner"]} == {"ada", "bob"}
    assert top["similarity"] >= 0.8


STEP = (
    "import jax.numpy as jnp\n\ndef step(params, batch, lr):\n"
    "    grads = jnp.mean(batch, axis=0) * params\n    scaled = grads * lr\n"
    "    updated = params - scaled\n    norm = jnp.sqrt(jnp.sum(updated ** 2))\n"
    "    return updated / jnp.maximum(norm, 1.0)\n"
)


def test_a_removed_learner_leaves_every_similarity_view(client: TestClient) -> None:
    """Issue 37: an old report's pair page showed a removed learner's code to staff
    (200), while every other course view hid them. It answers 404, as for a pair that
    does not exist, and the report lists their pairs no more; back in the course,
    they are back in it."""
    cid, teacher = course_with(client, "ada", "bob", "cy")
    token_for("tess")
    ta = client.post(f"/api/courses/{cid}/members", json={"user": "tess", "role": "ta"},
                     headers=teacher)  # fmt: skip
    assert ta.status_code == 201, ta.text
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={"problem": BANK_SLUG})
    for name, renamed in (("ada", "grads"), ("bob", "g"), ("cy", "gradients")):
        graded(name, score=1.0, when=utcnow(), code=STEP.replace("grads", renamed))
    started = client.post(f"/api/courses/{cid}/problems/{BANK_SLUG}/similarity",
                          json={"scope": "accepted"}, headers=teacher)  # fmt: skip
    report_id = started.json()["id"]
    similarity_runs.run(report_id)
    api_report = f"/api/courses/{cid}/similarity/{report_id}"
    stored = [{p["left_learner"], p["right_learner"]} for p in
              client.get(api_report, headers=teacher).json()["pairs"]]  # fmt: skip
    assert sorted(map(sorted, stored)) == [["ada", "bob"], ["ada", "cy"], ["bob", "cy"]]
    with_bob = [index for index, pair in enumerate(stored) if "bob" in pair]
    without_bob = stored.index({"ada", "cy"})
    report_page = f"/courses/{cid}/similarity/{report_id}"
    instructor, assistant = TestClient(client.app), TestClient(client.app)
    sign_in(instructor, "teacher")
    sign_in(assistant, "tess")
    for browser in (instructor, assistant):
        assert browser.get(f"{report_page}/pairs/{with_bob[0]}").status_code == 200

    removed = client.delete(f"/api/courses/{cid}/members/{_id('bob')}", headers=teacher)
    assert removed.status_code == 204
    for browser in (instructor, assistant):
        for index in with_bob:
            pair_page = browser.get(f"{report_page}/pairs/{index}")
            assert (
                pair_page.status_code == 404 and "updated = params - scaled" not in pair_page.text
            )
        kept = browser.get(f"{report_page}/pairs/{without_bob}")
        assert kept.status_code == 200 and "ada and cy" in kept.text
        listing = browser.get(report_page)
        assert listing.status_code == 200 and "bob" not in listing.text
        assert f'/pairs/{without_bob}"' in listing.text  # its link keeps its address
    listed = client.get(api_report, headers=teacher).json()["pairs"]
    assert [{p["left_learner"], p["right_learner"]} for p in listed] == [{"ada", "cy"}]

    client.post(f"/api/courses/{cid}/members", json={"user": "bob"}, headers=teacher)
    assert instructor.get(f"{report_page}/pairs/{with_bob[0]}").status_code == 200
    assert len(client.get(api_report, headers=teacher).json()["pairs"]) == 3


def test_refused_settings_leave_nothing_behind(client: TestClient) -> None:
    cid, teacher = course_with(client)
    for body in (
        {"due_at": "2030-01-01T00:00:00", "opens_at": "2030-02-01T00:00:00"},  # due before opening
        {"late_policy": "penalty"},  # a late policy without a due date
        {"due_at": "2030-01-01T00:00:00", "late_cutoff_at": "2029-12-01T00:00:00"},
    ):
        refused = client.put(f"/api/courses/{cid}/assignments", headers=teacher,
                             json={"problem": BANK_SLUG} | body)  # fmt: skip
        assert refused.status_code == 400, (body, refused.text)
    assert client.get(f"/api/courses/{cid}", headers=teacher).json()["assignments"] == []
    client.cookies.clear()
    token = sign_in(client, "teacher")
    page = client.post(f"/courses/{cid}/assignments", data={
        "problem": BANK_SLUG, "due": "2030-01-01T00:00", "opens": "2030-02-01T00:00",
        "csrf_token": token,
    })  # fmt: skip
    assert page.status_code == 400 and "before the assignment opens" in page.text
    assert client.get(f"/api/courses/{cid}", headers=teacher).json()["assignments"] == []


def test_a_learner_added_by_name_shows_the_course_only_their_work_from_then_on(
    client: TestClient,
) -> None:
    token_for("eve")
    private = graded("eve", score=1.0, when=utcnow() - timedelta(days=2))  # before any course
    cid, teacher = course_with(client)
    client.put(f"/api/courses/{cid}/assignments", headers=teacher, json={
        "problem": BANK_SLUG, "opens_at": (utcnow() - timedelta(days=300)).isoformat(),
    })  # fmt: skip
    added = client.post(f"/api/courses/{cid}/members", json={"user": "eve"}, headers=teacher)
    assert added.status_code == 201
    timeline = client.get(f"/api/courses/{cid}/learners/{_id('eve')}/timeline", headers=teacher)
    assert private not in {e["submission_id"] for e in timeline.json()["data"]}
    assert cells(client, cid, teacher)["eve"]["status"] == "not started"
    every = client.get(f"/api/courses/{cid}/submissions.csv", headers=teacher).text
    assert "total = x.sum()" not in every  # her code is not in the export either
    mine = client.get(f"/api/courses/{cid}", headers=token_for("eve")).json()
    assert mine["standing"][0]["status"] == "not started"
    # Joining with the code herself opens her work in the window to the course.
    code = client.get(f"/api/courses/{cid}", headers=teacher).json()["join_code"]
    client.post("/api/courses/join", json={"code": code}, headers=token_for("eve"))
    assert cells(client, cid, teacher)["eve"]["status"] == "solved"
    # Removed and added back by name, her enrolment stays: her grade does too.
    client.delete(f"/api/courses/{cid}/members/{_id('eve')}", headers=teacher)
    client.post(f"/api/courses/{cid}/members", json={"user": "eve"}, headers=teacher)
    assert cells(client, cid, teacher)["eve"]["status"] == "solved"


def test_dates_outside_the_calendar_and_early_extensions_are_refused_in_words(
    client: TestClient,
) -> None:
    cid, teacher = course_with(client, "ada")
    for far in ("9999-12-31T23:59:00-05:00", "0001-01-01T00:00:00+05:00", "1999-01-01T00:00:00"):
        refused = client.put(f"/api/courses/{cid}/assignments", headers=teacher,
                             json={"problem": BANK_SLUG, "due_at": far})  # fmt: skip
        assert refused.status_code == 400, (far, refused.text)
        assert "between the years 2000 and 2199" in refused.json()["detail"]
    client.put(f"/api/courses/{cid}/assignments", headers=teacher,
               json={"problem": BANK_SLUG, "due_at": "2031-01-01T00:00:00"})  # fmt: skip
    for due, why in (
        ("2030-12-01T00:00:00", "later than the assignment's due date"),
        ("9999-12-31T23:59:00-05:00", "between the years 2000 and 2199"),
    ):
        early = client.post(f"/api/courses/{cid}/extensions", headers=teacher, json={
            "data": [{"user": "ada", "problem": BANK_SLUG, "due_at": due}],
        })  # fmt: skip
        assert early.status_code == 400 and why in early.json()["detail"], early.text
    # A CSV the csv module cannot read (a bare carriage return inside a field) is a
    # 400 that names the line, not a crash; a bad row is named by its line in the
    # file, blank lines included; 2,000 rows (past the 64 KiB JSON limit) are read.
    unreadable = f"user,problem,due_at\nada,{BANK_SLUG},2032-01-01\rT00:00\n"
    for route in ("extensions.csv", "student-ids"):
        answer = client.post(f"/api/courses/{cid}/{route}", content=unreadable, headers=teacher)
        assert answer.status_code == 400, answer.text
        assert "line 2 of the CSV cannot be read" in answer.json()["detail"]
    long = "user,student_id\n" + "".join(f"learner-{n:05},S{n:040}\n" for n in range(2000))
    assert len(long) > 64 * 1024
    answer = client.post(f"/api/courses/{cid}/student-ids", content=long, headers=teacher)
    assert answer.status_code == 400 and "and 1950 more" in answer.json()["detail"]
    spaced = "user,student_id\n\nada,S1\n\nnobody,S2\n"
    answer = client.post(f"/api/courses/{cid}/student-ids", content=spaced, headers=teacher)
    assert answer.status_code == 400 and "row 5: 'nobody'" in answer.json()["detail"]
    assert client.get(f"/api/courses/{cid}/extensions", headers=teacher).json()["count"] == 0
