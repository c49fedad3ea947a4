"""Regrades: run in the background against a chosen version, review, apply or discard;
old verdicts stay recorded with their version. The last test grades for real."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.core.db import session_scope
from app.data import accounts, assignments, catalog, courses, regrades, rubrics
from app.data import submissions as submission_data
from app.data.course_submissions import VERDICT, VERSION_ID, within
from app.grading.runs import FunctionGrader, GradeFunction
from app.grading.worker import EmbeddedWorkers
from app.models import Course, PastVerdict, Regrade, Submission, User
from app.reports import gradebook
from grader.child.verdicts import Mode, Verdict
from grader.grade import grade
from grader.judging.report import GradeReport
from grader.problems.problem import Problem
from tests.app.conftest import BANK_SLUG, in_process_client, sign_in

FIXED = "Clarified: the gradients are summed, then divided once."


def fixed_only(
    problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
) -> GradeReport:
    """A stand-in grader: a version whose statement holds FIXED accepts everything."""
    verdict = Verdict.ACCEPTED if FIXED in problem.statement else Verdict.WRONG_ANSWER
    score = 1.0 if verdict is Verdict.ACCEPTED else 0.0
    return GradeReport(problem=problem.slug, mode=mode, verdict=verdict, score=score)


def drain(grader: GradeFunction) -> None:
    workers = EmbeddedWorkers(threads=1, grader=FunctionGrader(grader))
    while workers.work_once("test"):
        pass


def new_version(bank: Path, *, statement: str | None = None, reference: str | None = None) -> int:
    folder = bank / "problems" / BANK_SLUG
    if statement is not None:
        (folder / "statement.md").write_text((folder / "statement.md").read_text() + statement)
    if reference is not None:
        (bank / "reference_solutions" / f"{BANK_SLUG}.py").write_text(reference)
    with session_scope() as session:
        catalog.sync(session=session)
        newest = catalog.newest(session=session, slug=BANK_SLUG)
        # An author checked it (tests/app/test_authoring.py runs the real check):
        # a course may be regraded only against a live or checked version.
        newest.check_status = "passed"
        return newest.number


@pytest.fixture
def course(private_bank: Path) -> int:
    """teacher's course with ada and bob, each with one submit graded by version 1."""
    with session_scope() as session:
        teacher = accounts.create_user(
            session=session, name="teacher", password="long test password", role="instructor"
        )
        course = courses.create_course(session=session, name="JAX 101", instructor=teacher)
        assignments.assign(session=session, course=course, problem=BANK_SLUG, due_at=None)
        v1 = catalog.live_version(session=session, slug=BANK_SLUG)
        assert v1 is not None and v1.number == 1
        for name in ("ada", "bob"):
            learner = accounts.create_user(
                session=session, name=name, password="long test password"
            )
            courses.join_course(
                session=session, code=course.join_code, user=learner, address="test"
            )
            session.add(Submission(user_id=learner.id, problem=BANK_SLUG, code=f"# {name}\n",
                                   mode="submit", status="done", verdict="wrong_answer",
                                   score=0.0, problem_version_id=v1.id,
                                   hidden_draw=1000 + len(name)))  # fmt: skip
        return course.id


@pytest.fixture
def browser(course: int) -> Iterator[TestClient]:
    with in_process_client() as client:
        yield client


def verdicts(course_id: int | None = None) -> dict[str, tuple[str | None, int | None]]:
    """Each learner's verdict and grading version: as the course sees them, or (no
    course) the submissions' own, which the learners' own pages show."""
    with session_scope() as session:
        if course_id is None:
            query = select(User.name, Submission.verdict, Submission.problem_version_id)
        else:
            course = session.get_one(Course, course_id)
            query = within(course, User.name, VERDICT, VERSION_ID)
        rows = session.execute(query.join(User, User.id == Submission.user_id))
        return {
            name: (verdict, catalog.version_number(session=session, version_id=version))
            for name, verdict, version in rows
        }


def test_a_regrade_previews_changes_then_applies_them_keeping_the_old_verdicts(
    browser: TestClient, course: int, private_bank: Path
) -> None:
    assert new_version(private_bank, statement=FIXED) == 2
    token = sign_in(browser, "teacher")
    started = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
        follow_redirects=False,
    )
    assert started.status_code == 303
    page_url = started.headers["location"]
    running = browser.get(page_url).text
    assert "running" in running and "0 / 2 submissions re-run" in running
    assert browser.get(page_url + "/progress").json() == {
        "status": "running",
        "done": 0,
        "total": 2,
    }
    again = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
    )
    assert again.status_code == 409 and "apply or discard it first" in again.text

    drain(fixed_only)
    ready = browser.get(page_url).text
    assert (
        "2 / 2 submissions re-run" in ready
        and "<strong>2</strong> verdict(s) would change" in ready
    )
    assert verdicts(course) == {"ada": ("wrong_answer", 1), "bob": ("wrong_answer", 1)}  # not yet

    assert browser.post(page_url + "/apply", data={"csrf_token": token}).status_code == 200
    assert verdicts(course) == {"ada": ("accepted", 2), "bob": ("accepted", 2)}
    # Applied in this course only: the submissions themselves keep their verdicts.
    assert verdicts() == {"ada": ("wrong_answer", 1), "bob": ("wrong_answer", 1)}
    with session_scope() as session:
        past = session.scalars(select(PastVerdict)).all()
        assert sorted((p.verdict, catalog.version_number(session=session, version_id=p.problem_version_id)) for p in past) == [
            ("wrong_answer", 1),
            ("wrong_answer", 1),
        ]  # fmt: skip
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        ada_id = ada.id
    timeline = browser.get(f"/courses/{course}/learners/{ada_id}").text
    assert "graded by v2" in timeline and "Earlier verdicts, replaced by regrades" in timeline

    nothing_left = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
    )
    assert nothing_left.status_code == 409 and "graded by another version" in nothing_left.text


def test_a_regrade_meets_the_same_hidden_inputs_as_the_first_grading(
    course: int, private_bank: Path
) -> None:
    draws: dict[str, int] = {}

    def recording(
        problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
    ) -> GradeReport:
        draws[code.strip("# \n")] = hidden_draw
        return fixed_only(problem, code, mode, device, hidden_draw)

    new_version(private_bank, statement=FIXED)
    with session_scope() as session:
        teacher = accounts.user_by_name(session=session, name="teacher")
        assert teacher is not None
        regrades.start(
            session=session,
            course=session.get_one(Course, course),
            version=catalog.newest(session=session, slug=BANK_SLUG),
            by=teacher,
        )
    drain(recording)
    assert draws == {"ada": 1003, "bob": 1003}


def test_every_new_submission_gets_its_own_secret_draw(course: int) -> None:
    with session_scope() as session:
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        made = [
            submission_data.create_submission(
                session=session, user=ada, problem=BANK_SLUG, code="x", mode="submit", max_queued=99
            ).hidden_draw
            for _ in range(8)
        ]
    assert all(draw is not None and 0 <= draw < 2**31 for draw in made)
    assert len(set(made)) == 8  # independent draws (a collision is a 1-in-10^8 event)


def test_a_discarded_regrade_changes_nothing(
    browser: TestClient, course: int, private_bank: Path
) -> None:
    new_version(private_bank, statement=FIXED)
    token = sign_in(browser, "teacher")
    page_url = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
        follow_redirects=False,
    ).headers["location"]
    drain(fixed_only)
    assert browser.post(page_url + "/discard", data={"csrf_token": token}).status_code == 200
    assert "Discarded" in browser.get(page_url).text
    assert verdicts() == {"ada": ("wrong_answer", 1), "bob": ("wrong_answer", 1)}
    assert browser.post(page_url + "/apply", data={"csrf_token": token}).status_code == 409


def test_only_the_course_instructor_regrades(
    browser: TestClient, course: int, private_bank: Path
) -> None:
    new_version(private_bank, statement=FIXED)
    token = sign_in(browser, "ada")
    refused = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
    )
    assert refused.status_code == 403
    assert browser.get(f"/courses/{course}/problems/{BANK_SLUG}").status_code == 403
    with session_scope() as session:
        other = accounts.create_user(
            session=session, name="other", password="long test password", role="instructor"
        )
        courses.create_course(session=session, name="Other", instructor=other)
    browser.cookies.clear()
    token = sign_in(browser, "other")
    refused = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
    )
    assert refused.status_code == 404  # not their course: it does not exist for them


@pytest.mark.slow
@pytest.mark.sandbox
def test_fixing_a_wrong_reference_flips_verdicts_when_regraded_for_real(
    course: int, private_bank: Path
) -> None:
    """Version 1 shipped a wrong reference (a known mistake); the learner who wrote the
    right function was rejected and the one who copied the mistake accepted. Version 2
    fixes the reference; the regrade, graded in the sandbox, flips both."""
    folder = private_bank / "problems" / BANK_SLUG
    right = (private_bank / "reference_solutions" / f"{BANK_SLUG}.py").read_text()
    wrong = (folder / "mistakes" / "averaged_chunks.py").read_text()
    with session_scope() as session:
        for submission in session.scalars(select(Submission)):
            submission.status, submission.verdict = "queued", None
            submission.code = right if submission.code == "# ada\n" else wrong
    new_version(private_bank, reference=wrong)
    with session_scope() as session:
        v2 = catalog.newest(session=session, slug=BANK_SLUG)
        catalog.publish(session=session, version=v2)
        for submission in session.scalars(select(Submission)):
            submission.problem_version_id = v2.id  # graded by the broken version

    def really(
        problem: Problem, code: str, mode: Mode, device: str, hidden_draw: int
    ) -> GradeReport:
        return grade(problem, code, mode=mode, device=device, variant=hidden_draw)

    drain(really)
    assert verdicts() == {"ada": ("wrong_answer", 2), "bob": ("accepted", 2)}

    assert new_version(private_bank, reference=right + "# v3: the real reference again\n") == 3
    with session_scope() as session:
        course_row = session.get_one(Course, course)
        teacher = accounts.user_by_name(session=session, name="teacher")
        assert teacher is not None
        regrade = regrades.start(
            session=session,
            course=course_row,
            version=catalog.newest(session=session, slug=BANK_SLUG),
            by=teacher,
        )
        regrade_id = regrade.id
    drain(really)
    with session_scope() as session:
        regrade = session.get_one(Regrade, regrade_id)
        assert regrade.status == "ready"
        changes = {
            c.learner: (c.old_verdict, c.new_verdict)
            for c in regrades.changes(session=session, regrade=regrade)
        }
        assert changes == {"ada": ("wrong_answer", "accepted"), "bob": ("accepted", "wrong_answer")}
        # The reference itself was wrong: an author applies the fix for everyone.
        assert regrades.apply(session=session, regrade=regrade, platform_wide=True) == 2
    assert verdicts() == {"ada": ("accepted", 3), "bob": ("wrong_answer", 3)}
    assert verdicts(course) == verdicts()


def test_a_regrade_applied_in_one_course_changes_only_that_course(
    browser: TestClient, course: int, private_bank: Path
) -> None:
    """ada is also in a second course; the first course regrades and applies."""
    with session_scope() as session:
        other_teacher = accounts.create_user(
            session=session, name="other", password="long test password", role="instructor"
        )
        other = courses.create_course(session=session, name="Other", instructor=other_teacher)
        assignments.assign(session=session, course=other, problem=BANK_SLUG, due_at=None)
        ada = accounts.user_by_name(session=session, name="ada")
        assert ada is not None
        courses.join_course(session=session, code=other.join_code, user=ada, address="test")
        for assignment in assignments.assignments_of(session=session, course=other):
            assignment.opens_at = datetime(2020, 1, 1)  # ada's earlier submit counts there too
        other_id = other.id
    assert verdicts(other_id) == {"ada": ("wrong_answer", 1)}
    new_version(private_bank, statement=FIXED)
    token = sign_in(browser, "teacher")
    started = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
        follow_redirects=False,
    )
    drain(fixed_only)
    assert (
        browser.post(started.headers["location"] + "/apply", data={"csrf_token": token}).status_code
        == 200
    )
    assert verdicts(course)["ada"] == ("accepted", 2)
    assert verdicts(other_id) == {"ada": ("wrong_answer", 1)}  # the other course: unchanged
    assert verdicts()["ada"] == ("wrong_answer", 1)  # ada's own pages: unchanged
    refused = browser.post(
        started.headers["location"] + "/apply-everywhere", data={"csrf_token": token}
    )
    assert refused.status_code == 403  # an instructor's regrade stays in the course


def test_a_course_is_regraded_only_against_a_live_or_checked_version(
    browser: TestClient, course: int, private_bank: Path
) -> None:
    new_version(private_bank, statement=FIXED)
    with session_scope() as session:
        catalog.newest(session=session, slug=BANK_SLUG).check_status = "unchecked"
    token = sign_in(browser, "teacher")
    refused = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
    )
    assert "neither live nor checked" in refused.text
    with session_scope() as session:
        assert session.scalars(select(Regrade)).all() == []


def test_a_regrade_keeps_manual_grades_and_says_how_the_total_moves(
    browser: TestClient, course: int, private_bank: Path
) -> None:
    """ada's submit carries a +2 rubric item: the new automatic verdict moves her total
    from 2 to 10 (of 10, capped), and the preview, the API and the result say so; the
    item stays on the submission. bob, not graded by hand, gets no such line."""
    with session_scope() as session:
        the_course = session.get_one(Course, course)
        teacher = accounts.user_by_name(session=session, name="teacher")
        assert teacher is not None
        assignment = assignments.assigned(session=session, course=the_course, slug=BANK_SLUG)
        item = rubrics.add_item(session=session, course=the_course, assignment=assignment,
                                points=2, description="explains the shapes", by=teacher)  # fmt: skip
        ada_submit = session.scalars(
            select(Submission).join(User, User.id == Submission.user_id).where(User.name == "ada")
        ).one()
        rubrics.apply(session=session, course=the_course, submission=ada_submit, item_id=item.id, by=teacher)  # fmt: skip
        ada_id = ada_submit.user_id
    assert new_version(private_bank, statement=FIXED) == 2
    token = sign_in(browser, "teacher")
    page_url = browser.post(
        f"/courses/{course}/problems/{BANK_SLUG}/regrades",
        data={"version": "2", "csrf_token": token},
        follow_redirects=False,
    ).headers["location"]
    drain(fixed_only)
    note = "manual grades kept: total 2 -&gt; 10 of 10"
    preview = browser.get(page_url).text
    assert preview.count(note) == 1  # ada's row only
    regrade_id = page_url.rsplit("/", 1)[-1]
    api = browser.get(f"/api/courses/{course}/regrades/{regrade_id}").json()
    assert {c["learner"]: c["manual_note"] for c in api["changes"]} == {
        "ada": "manual grades kept: total 2 -> 10 of 10",
        "bob": None,
    }
    assert browser.post(page_url + "/apply", data={"csrf_token": token}).status_code == 200
    assert browser.get(page_url).text.count(note) == 1  # the result says it too
    with session_scope() as session:
        the_course = session.get_one(Course, course)
        cell = gradebook.grade_matrix(session=session, course=the_course).cells[(ada_id, BANK_SLUG)]
        assert (cell.final_score, cell.manual_points, cell.automatic_score) == (1.0, 2.0, 1.0)
