"""Courses: the matrix on a seeded course, its CSV, and who may see what."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from datetime import date, datetime

import pytest
from fastapi.testclient import TestClient

from app.core.db import session_scope
from app.data import accounts, assignments, courses
from app.data.assignments import AssignmentSettings
from app.models import Course, Submission, User
from app.reports import analytics, exports, gradebook, timeline
from grader.child.verdicts import Mode, Verdict
from grader.judging.report import CaseReport, GradeReport
from tests.app.conftest import in_process_client, sign_in

DUE = datetime(2026, 11, 1, 12, 0)
JOINED = datetime(2026, 10, 1)


DIAGNOSIS = "You averaged the micro-batch gradients instead of summing them."


def submit(session: object, user: User, problem: str, verdict: str, at: datetime) -> None:
    """A graded submit; a wrong one failed hidden case 'h2' with a diagnosis."""
    score = 1.0 if verdict == "accepted" else 0.0
    report = GradeReport(
        problem=problem, mode=Mode.SUBMIT, verdict=Verdict(verdict), score=score,
        cases=[CaseReport(name="s1", hidden=False, verdict=Verdict.ACCEPTED),
               CaseReport(name="h2", hidden=True, verdict=Verdict(verdict))],
        diagnosis=None if verdict == "accepted" else DIAGNOSIS,
    )  # fmt: skip
    row = Submission(user_id=user.id, problem=problem, code=f"# {user.name} at {at}\n", mode="submit",
                     status="done", verdict=verdict, score=score, created_at=at,
                     result_json=json.dumps(report.to_json()))  # fmt: skip
    session.add(row)  # type: ignore[attr-defined]


@pytest.fixture
def seeded(database: str) -> int:
    """Teacher's course: ada solves on time (2nd try), bob solves late, cy never tries."""
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        course = courses.create_course(session=session, name="JAX 101", instructor=teacher)
        learners = {}
        for name in ("ada", "bob", "cy"):
            learners[name] = accounts.create_user(
                session=session, name=name, password="long test password"
            )
            courses.join_course(
                session=session, code=course.join_code.lower(), user=learners[name], address="test"
            )
        for slug, due in (("scan-microbatched-grads", DUE), ("nnx-grad-accumulation", None)):
            assignments.assign(  # opened before the seeded submits: they count for the course
                session=session,
                course=course,
                problem=slug,
                settings=AssignmentSettings(due_at=due, opens_at=JOINED),
            )
        submit(
            session,
            learners["ada"],
            "scan-microbatched-grads",
            "wrong_answer",
            datetime(2026, 10, 30),
        )
        submit(
            session, learners["ada"], "scan-microbatched-grads", "accepted", datetime(2026, 10, 31)
        )
        submit(
            session, learners["bob"], "scan-microbatched-grads", "accepted", datetime(2026, 11, 2)
        )
        submit(
            session, learners["bob"], "nnx-grad-accumulation", "wrong_answer", datetime(2026, 11, 2)
        )
        return course.id


def test_the_matrix_on_a_seeded_course(seeded: int) -> None:
    with session_scope() as session:
        course = session.get(Course, seeded)
        assert course is not None
        matrix = gradebook.grade_matrix(session=session, course=course)
        names = [learner.name for learner in matrix.learners]
        assert names == ["ada", "bob", "cy"]
        ada, bob, cy = matrix.learners
        scan = "scan-microbatched-grads"
        assert (
            matrix.cell(ada, scan).best_verdict,
            matrix.cell(ada, scan).attempts,
            matrix.cell(ada, scan).late,
        ) == ("accepted", 2, False)
        assert matrix.cell(ada, scan).first_accepted_at == datetime(2026, 10, 31)
        assert (matrix.cell(bob, scan).best_verdict, matrix.cell(bob, scan).late) == (
            "accepted",
            True,
        )
        assert matrix.cell(cy, scan).attempts == 0
        assert matrix.cell(bob, "nnx-grad-accumulation").late is False  # no due date
        assert matrix.solve_rate(scan) == pytest.approx(2 / 3)
        assert matrix.median_attempts(scan) == 1.5  # ada 2, bob 1
        assert matrix.median_attempts("nnx-grad-accumulation") is None


def test_the_csv_export(seeded: int) -> None:
    with session_scope() as session:
        course = session.get(Course, seeded)
        assert course is not None
        text = exports.grades_csv(session=session, course=course)
    assert text.split("\r\n") == [
        "user,display_name,email,student_id,"
        "scan-microbatched-grads raw,scan-microbatched-grads final,scan-microbatched-grads late,"
        "scan-microbatched-grads override,scan-microbatched-grads automatic,"
        "scan-microbatched-grads rubric,nnx-grad-accumulation raw,nnx-grad-accumulation final,"
        "nnx-grad-accumulation late,nnx-grad-accumulation override,"
        "nnx-grad-accumulation automatic,nnx-grad-accumulation rubric,total (of 20)",
        "ada,ada,,,10,10,no,,10,,0,0,no,,0,,10",
        "bob,bob,,,10,10,yes,,10,,0,0,no,,0,,10",
        "cy,cy,,,0,0,no,,0,,0,0,no,,0,,0",
        "",
    ]


def test_spreadsheet_formulas_are_neutralised() -> None:
    assert exports.spreadsheet_safe("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert exports.spreadsheet_safe("@SUM") == "'@SUM"
    assert exports.spreadsheet_safe("ada") == "ada"


@pytest.fixture
def browser(seeded: int) -> Iterator[TestClient]:
    with in_process_client() as client:
        yield client


def test_only_the_instructor_sees_the_dashboard_and_the_csv(
    browser: TestClient, seeded: int
) -> None:
    sign_in(browser, "teacher")
    dashboard = browser.get(f"/courses/{seeded}").text
    assert "Grade dashboard" in dashboard
    assert "67% · 1.5" in dashboard
    csv = browser.get(f"/courses/{seeded}/grades.csv")
    assert csv.status_code == 200
    assert csv.headers["content-type"].startswith("text/csv")
    assert csv.text.startswith("\ufeffuser,")

    browser.cookies.clear()
    sign_in(browser, "ada")
    learner_view = browser.get(f"/courses/{seeded}").text
    assert "Grade dashboard" not in learner_view
    assert "bob" not in learner_view  # learners see only their own data
    assert browser.get(f"/courses/{seeded}/grades.csv").status_code == 403


def test_strangers_and_learners_cannot_manage_courses(browser: TestClient, seeded: int) -> None:
    with session_scope() as session:
        accounts.create_user(session=session, name="stranger", password="long test password")
    token = sign_in(browser, "stranger")
    assert (
        browser.get(f"/courses/{seeded}").status_code == 404
    )  # not a member: the course does not exist
    assert browser.get(f"/courses/{seeded}/grades.csv").status_code == 404
    assert browser.post("/courses", data={"name": "Mine", "csrf_token": token}).status_code == 403
    wrong = browser.post("/courses/join", data={"code": "NOPE1234", "csrf_token": token})
    assert wrong.status_code == 400
    assert "no course has that join code" in wrong.text

    browser.cookies.clear()
    token = sign_in(browser, "ada")
    refused = browser.post(
        f"/courses/{seeded}/assignments", data={"problem": "optax-multisteps", "csrf_token": token}
    )
    assert refused.status_code == 403


def test_the_matrix_sorts_and_filters(seeded: int) -> None:
    with session_scope() as session:
        course = session.get(Course, seeded)
        assert course is not None
        matrix = gradebook.grade_matrix(session=session, course=course)

        def names(**view: str) -> list[str]:
            return [u.name for u in matrix.rows(**view)]

        assert names() == ["ada", "bob", "cy"]
        assert names(query="B") == ["bob"]
        assert names(show="late") == ["bob"]
        assert names(show="unsolved") == ["ada", "bob", "cy"]  # nobody solved nnx
        assert names(sort="solved") == ["ada", "bob", "cy"]  # 1, 1, 0 solved; ties by name
        # By one problem: best score first, then fewer attempts (bob solved in 1, ada in 2).
        assert names(sort="scan-microbatched-grads") == ["bob", "ada", "cy"]


def test_the_dashboard_page_filters_and_links_to_timelines_and_analytics(
    browser: TestClient, seeded: int
) -> None:
    sign_in(browser, "teacher")
    filtered = browser.get(f"/courses/{seeded}", params={"show": "late"}).text
    assert "Showing 1 of 3 learners" in filtered
    assert ">bob</a>" in filtered and ">ada</a>" not in filtered
    page = browser.get(f"/courses/{seeded}").text
    assert f"/courses/{seeded}/problems/scan-microbatched-grads" in page
    assert re.search(rf"/courses/{seeded}/learners/\d+", page)


def test_a_learner_timeline_shows_each_submission_with_code_and_verdict(
    browser: TestClient, seeded: int
) -> None:
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        ada_id = ada.id
    sign_in(browser, "teacher")
    timeline = browser.get(f"/courses/{seeded}/learners/{ada_id}").text
    assert timeline.index("2026-10-31") < timeline.index("2026-10-30")  # newest first
    assert "# ada at 2026-10-30 00:00:00" in timeline  # the code itself
    assert "Wrong answer" in timeline and DIAGNOSIS in timeline

    browser.cookies.clear()
    sign_in(browser, "bob")  # a learner cannot read another learner's timeline
    assert browser.get(f"/courses/{seeded}/learners/{ada_id}").status_code == 403


def test_problem_analytics_on_the_seeded_course(seeded: int) -> None:
    with session_scope() as session:
        course = session.get(Course, seeded)
        assert course is not None
        stats = analytics.problem_stats(
            session=session, course=course, problem="scan-microbatched-grads"
        )
    assert (stats.learners, stats.solved, stats.submissions) == (3, 2, 3)
    # ada solved on 10-31 (2nd attempt), bob on 11-02 (1st); the series fills the gap day.
    assert [(d.isoformat(), n) for d, n in stats.solved_by_day] == [
        ("2026-10-31", 1),
        ("2026-11-01", 1),
        ("2026-11-02", 2),
    ]
    assert stats.attempt_bars()[:2] == [("1", 1), ("2", 1)]
    assert stats.diagnoses == [(DIAGNOSIS, 1)]
    assert stats.failing_cases == [("h2 (hidden): wrong answer", 1)]


def test_the_analytics_page_draws_charts_and_tables(browser: TestClient, seeded: int) -> None:
    sign_in(browser, "teacher")
    page = browser.get(f"/courses/{seeded}/problems/scan-microbatched-grads")
    assert page.status_code == 200
    assert page.text.count('<svg class="chart"') == 2
    assert "2 of 3 learners solved it (67%)" in page.text
    assert "mean points 6.67 final, 6.67 raw, of 10" in page.text  # ada and bob: 10 each
    assert DIAGNOSIS in page.text and "h2 (hidden)" in page.text
    assert browser.get(f"/courses/{seeded}/problems/optax-multisteps").status_code == 404


def test_the_raw_submissions_csv(browser: TestClient, seeded: int) -> None:
    sign_in(browser, "teacher")
    response = browser.get(f"/courses/{seeded}/submissions.csv")
    assert response.status_code == 200 and response.text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(response.text.removeprefix("\ufeff"))))
    assert rows[0] == list(exports.SUBMISSION_COLUMNS)
    by_learner = [(r[1], r[2], r[5], r[8], r[11], r[12]) for r in rows[1:]]
    assert by_learner == [
        ("ada", "scan-microbatched-grads", "no", "wrong_answer", DIAGNOSIS, "# ada at 2026-10-30 00:00:00\n"),
        ("ada", "scan-microbatched-grads", "no", "accepted", "", "# ada at 2026-10-31 00:00:00\n"),
        ("bob", "scan-microbatched-grads", "yes", "accepted", "", "# bob at 2026-11-02 00:00:00\n"),
        ("bob", "nnx-grad-accumulation", "no", "wrong_answer", DIAGNOSIS, "# bob at 2026-11-02 00:00:00\n"),
    ]  # fmt: skip
    browser.cookies.clear()
    sign_in(browser, "ada")
    assert browser.get(f"/courses/{seeded}/submissions.csv").status_code == 403


def test_work_from_before_the_window_or_on_other_problems_stays_out_of_the_course(
    seeded: int,
) -> None:
    with session_scope() as session:
        course = session.get_one(Course, seeded)
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        submit(session, ada, "nnx-grad-accumulation", "accepted", datetime(2026, 9, 1))  # before
        submit(session, ada, "optax-multisteps", "accepted", datetime(2026, 11, 3))  # unassigned
        session.flush()
        entries = timeline.timeline(session=session, course=course, learner=ada)
        assert [(e.submission.problem, e.submission.created_at.day) for e in entries] == [
            ("scan-microbatched-grads", 31),
            ("scan-microbatched-grads", 30),
        ]
        matrix = gradebook.grade_matrix(session=session, course=course)
        assert matrix.cell(ada, "nnx-grad-accumulation").attempts == 0
        assert "optax-multisteps" not in exports.submissions_csv(session=session, course=course)


def test_a_due_date_with_an_offset_is_converted_to_utc(seeded: int, browser: TestClient) -> None:
    token = sign_in(browser, "teacher")
    answer = browser.post(
        f"/courses/{seeded}/assignments",
        data={
            "problem": "optax-multisteps",
            "due": f"{date.today().year + 1}-12-01T23:59+01:00",
            "csrf_token": token,
        },
    )
    assert answer.status_code in (200, 303)
    assert (
        f"data-local>{date.today().year + 1}-12-01 22:59 UTC</time>"
        in browser.get(f"/courses/{seeded}").text
    )
    garbage = browser.post(
        f"/courses/{seeded}/assignments",
        data={"problem": "optax-multisteps", "due": "next friday", "csrf_token": token},
    )
    assert garbage.status_code == 400 and "must look like" in garbage.text  # on the form


def test_changing_an_assignment_starts_from_its_current_settings(
    seeded: int, browser: TestClient
) -> None:
    token = sign_in(browser, "teacher")
    settings = {
        "problem": "scan-microbatched-grads", "opens": "2026-10-01T00:00",
        "due": "2026-11-01T12:00", "late_policy": "penalty", "cutoff": "2026-11-08T12:00",
        "penalty_percent": "15", "penalty_unit": "hour", "penalty_floor": "40", "points": "25",
    }  # fmt: skip
    answer = browser.post(f"/courses/{seeded}/assignments", data={**settings, "csrf_token": token})
    assert answer.status_code in (200, 303)
    page = browser.get(f"/courses/{seeded}").text
    link = f'/courses/{seeded}?edit=scan-microbatched-grads#assign">settings</a>'
    assert link in page
    # The assignments table says the window, the policy and the points, learners or not.
    listed = page[page.index('<section class="card" id="assignments">') :]
    listed = " ".join(re.sub(r"<[^>]+>", " ", listed[: listed.index("</table>")]).split())
    assert (
        "late work loses 15% per started hour, never below 40%; counts until 2026-11-08 12:00 UTC"
        in listed
    )
    assert "2026-11-01 12:00" in listed and " 25 " in listed
    # The form fills in an assigned problem's settings when it is picked (static/assign-form.js).
    forms = re.search(r"data-assigned='([^']+)'", page)
    assert forms is not None
    current = json.loads(html.unescape(forms[1]))["scan-microbatched-grads"]
    assert {k: current[k] for k in settings} == settings
    form = browser.get(f"/courses/{seeded}?edit=scan-microbatched-grads").text
    form = form[form.index('<section class="card" id="assign">') :]
    form = form[: form.index("</form>")]
    assert '<option value="scan-microbatched-grads" selected>' in form
    for name in ("opens", "due", "cutoff", "penalty_percent", "penalty_floor", "points"):
        assert re.search(rf'name="{name}"[^>]* value="{re.escape(settings[name])}"', form), name
    assert '<option value="penalty" selected>' in form
    assert '<option value="hour" selected>' in form
    # Without ?edit the form starts blank again.
    blank = browser.get(f"/courses/{seeded}").text
    assert 'name="points" type="number" min="0.01" step="any" value="10"' in blank
