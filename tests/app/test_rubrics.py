"""app/data/rubrics.py: items made, changed and removed by instructors, applied by staff
to a course's submissions (once each, whoever races), the graded mark, and the audit
trail of every change."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.data import accounts, api_tokens, assignments, courses, members, rubrics
from app.errors import InvalidInputError, NotFoundError
from app.models import (
    Assignment,
    Course,
    RubricApplication,
    RubricEvent,
    Submission,
    User,
)
from app.vocabulary import MemberRole, RubricAction
from tests.app.conftest import BANK_SLUG, in_process_client, sign_in

OTHER_SLUG = "nnx-grad-accumulation"
PASSWORD = "long test password"


@dataclass(frozen=True)
class Seeded:
    course: int
    other_course: int
    teacher: int
    ta: int
    learner: int
    submission: int  # the learner's, on BANK_SLUG
    elsewhere: int  # the learner's, on OTHER_SLUG (assigned too)


def seed(s: Session) -> Seeded:
    """A course with BANK_SLUG and OTHER_SLUG assigned, a TA, a learner who submitted both."""
    teacher = accounts.create_user(session=s, name="teacher", password=PASSWORD, role="instructor")
    ta = accounts.create_user(session=s, name="tara", password=PASSWORD)
    learner = accounts.create_user(session=s, name="ada", password=PASSWORD)
    course = courses.create_course(session=s, name="JAX 101", instructor=teacher)
    other = courses.create_course(session=s, name="Other", instructor=teacher)
    for slug in (BANK_SLUG, OTHER_SLUG):
        assignments.assign(session=s, course=course, problem=slug)
    assignments.assign(session=s, course=other, problem=BANK_SLUG)
    members.add(session=s, course=course, user=ta, role=MemberRole.TEACHING_ASSISTANT)
    courses.join_course(session=s, code=course.join_code, user=learner, address="test")
    made = []
    for slug in (BANK_SLUG, OTHER_SLUG):
        row = Submission(user_id=learner.id, problem=slug, code="x = 1\n", mode="submit",
                         status="done", verdict="wrong_answer", score=0.5)  # fmt: skip
        s.add(row)
        s.flush()
        made.append(row.id)
    return Seeded(course.id, other.id, teacher.id, ta.id, learner.id, made[0], made[1])


@pytest.fixture
def seeded(sqlite_database: str) -> Seeded:
    with session_scope() as session:
        return seed(session)


def assignment_of(session: Session, course: Course, slug: str = BANK_SLUG) -> Assignment:
    return assignments.assigned(session=session, course=course, slug=slug)


def test_items_are_made_changed_and_removed_with_an_audit_line_each(seeded: Seeded) -> None:
    with session_scope() as session:
        course, teacher = (
            session.get_one(Course, seeded.course),
            session.get_one(User, seeded.teacher),
        )
        assignment = assignment_of(session, course)
        shapes = rubrics.add_item(session=session, course=course, assignment=assignment,
                                  points=2, description=" explains the shapes ", by=teacher)  # fmt: skip
        loop = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=-1, description="a Python loop", by=teacher)  # fmt: skip
        assert [(i.points, i.description) for i in rubrics.items(session=session, assignment=assignment)] == [
            (2, "explains the shapes"), (-1, "a Python loop")
        ]  # fmt: skip
        rubrics.change_item(session=session, course=course, item_id=shapes.id, points=1.5,
                            description="explains the shapes", by=teacher)  # fmt: skip
        rubrics.change_item(
            session=session,
            course=course,
            item_id=shapes.id,
            points=1.5,
            description="explains the shapes",
            by=teacher,
        )  # no change: no line
        rubrics.remove_item(session=session, course=course, item_id=loop.id, by=teacher)
        assert [i.id for i in rubrics.items(session=session, assignment=assignment)] == [shapes.id]
        assert len(rubrics.items(session=session, assignment=assignment, removed=True)) == 2
        trail = rubrics.events(session=session, course=course, assignment=assignment)
        assert [(e.action, e.detail, e.created_by_name) for e in trail] == [
            (RubricAction.ITEM_CREATED, "+2: explains the shapes", "teacher"),
            (RubricAction.ITEM_CREATED, "-1: a Python loop", "teacher"),
            (RubricAction.ITEM_CHANGED, "+2 -> +1.5: explains the shapes", "teacher"),
            (RubricAction.ITEM_REMOVED, "-1: a Python loop", "teacher"),
        ]
        with pytest.raises(NotFoundError, match="removed"):
            rubrics.remove_item(session=session, course=course, item_id=loop.id, by=teacher)


@pytest.mark.parametrize(
    ("points", "description", "message"),
    [
        (float("nan"), "x", "points are a number from -1000 to 1000"),
        (float("inf"), "x", "points are a number from -1000 to 1000"),
        (1000.5, "x", "points are a number from -1000 to 1000"),
        (1, "   ", "description of 1 to 500 characters"),
        (1, "x" * 501, "description of 1 to 500 characters"),
    ],
)
def test_malformed_items_are_refused_in_words_and_change_nothing(
    seeded: Seeded, points: float, description: str, message: str
) -> None:
    with session_scope() as session:
        course, teacher = (
            session.get_one(Course, seeded.course),
            session.get_one(User, seeded.teacher),
        )
        assignment = assignment_of(session, course)
        with pytest.raises(InvalidInputError, match=message):
            rubrics.add_item(session=session, course=course, assignment=assignment,
                             points=points, description=description, by=teacher)  # fmt: skip
        assert session.scalar(select(func.count()).select_from(RubricEvent)) == 0
        assert rubrics.items(session=session, assignment=assignment, removed=True) == []


def test_another_courses_items_and_submissions_do_not_exist_here(seeded: Seeded) -> None:
    with session_scope() as session:
        course, teacher = (
            session.get_one(Course, seeded.course),
            session.get_one(User, seeded.teacher),
        )
        other = session.get_one(Course, seeded.other_course)
        theirs = rubrics.add_item(session=session, course=other, assignment=assignment_of(session, other),
                                  points=1, description="theirs", by=teacher)  # fmt: skip
        ours = rubrics.add_item(session=session, course=course, assignment=assignment_of(session, course),
                                points=1, description="ours", by=teacher)  # fmt: skip
        submission = session.get_one(Submission, seeded.submission)
        with pytest.raises(NotFoundError):
            rubrics.change_item(session=session, course=course, item_id=theirs.id, points=3,
                                description="hijacked", by=teacher)  # fmt: skip
        with pytest.raises(NotFoundError):
            rubrics.remove_item(session=session, course=course, item_id=theirs.id, by=teacher)
        with pytest.raises(NotFoundError):  # the learner is not in the other course
            rubrics.apply(session=session, course=other, submission=submission, item_id=theirs.id, by=teacher)  # fmt: skip
        with pytest.raises(NotFoundError):  # an item of another assignment of the course
            rubrics.apply(session=session, course=course, item_id=ours.id, by=teacher,
                          submission=session.get_one(Submission, seeded.elsewhere))  # fmt: skip
        with pytest.raises(NotFoundError):
            rubrics.add_item(session=session, course=course, assignment=assignment_of(session, other),
                             points=1, description="x", by=teacher)  # fmt: skip


def test_applying_twice_is_one_row_and_one_event_and_marks_graded_once(seeded: Seeded) -> None:
    with session_scope() as session:
        course = session.get_one(Course, seeded.course)
        teacher, ta = session.get_one(User, seeded.teacher), session.get_one(User, seeded.ta)
        assignment = assignment_of(session, course)
        item = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=2, description="explains the shapes", by=teacher)  # fmt: skip
        minus = rubrics.add_item(session=session, course=course, assignment=assignment,
                                 points=-0.5, description="no docstring", by=teacher)  # fmt: skip
        submission = session.get_one(Submission, seeded.submission)
        assert rubrics.apply(
            session=session, course=course, submission=submission, item_id=item.id, by=ta
        )
        assert not rubrics.apply(session=session, course=course, submission=submission, item_id=item.id, by=teacher)  # fmt: skip
        assert rubrics.apply(session=session, course=course, submission=submission, item_id=minus.id, by=teacher)  # fmt: skip
        found = rubrics.applied(session=session, submission_ids=[submission.id, seeded.elsewhere])
        assert list(found) == [submission.id]
        assert [(a.applied_by_name, i.description) for a, i in found[submission.id]] == [
            ("tara", "explains the shapes"), ("teacher", "no docstring")
        ]  # fmt: skip
        assert rubrics.manual_points(found[submission.id]) == 1.5
        graded = rubrics.gradings(session=session, submission_ids=[submission.id])
        assert graded[submission.id].graded_by_name == "tara"  # the first grader stays
        rubrics.mark_graded(session=session, course=course, submission=submission, by=teacher)
        assert rubrics.unapply(session=session, course=course, submission=submission, item_id=minus.id, by=ta)  # fmt: skip
        assert not rubrics.unapply(session=session, course=course, submission=submission, item_id=minus.id, by=ta)  # fmt: skip
        trail = rubrics.events(session=session, course=course)
        assert [(e.action, e.submission_id is not None, e.detail) for e in trail[2:]] == [
            (RubricAction.APPLIED, True, "+2: explains the shapes"),
            (RubricAction.MARKED_GRADED, True, ""),
            (RubricAction.APPLIED, True, "-0.5: no docstring"),
            (RubricAction.UNAPPLIED, True, "-0.5: no docstring"),
        ]
        rubrics.remove_item(session=session, course=course, item_id=item.id, by=teacher)
        assert rubrics.manual_points(rubrics.applied(session=session, submission_ids=[submission.id])[submission.id]) == 0  # fmt: skip
        with pytest.raises(InvalidInputError, match="removed"):
            rubrics.apply(session=session, course=course, submission=submission, item_id=item.id, by=ta)  # fmt: skip


def test_two_graders_in_two_sessions_keep_each_others_work(postgres_database: str) -> None:
    """Two graders at once, each in its own transaction: different items both stay; the
    same item raced by both is one row and one event, the loser told "already applied"."""
    with session_scope() as session:
        seeded = seed(session)
        course = session.get_one(Course, seeded.course)
        teacher = session.get_one(User, seeded.teacher)
        assignment = assignment_of(session, course)
        ids = [rubrics.add_item(session=session, course=course, assignment=assignment, points=p,
                                description=f"item {p}", by=teacher).id for p in (1, 2, 3)]  # fmt: skip
    # Only the start is synchronised: racing on ids[2], one insert waits on the other's
    # row lock until that transaction commits, then fails on the unique key.
    barrier = threading.Barrier(2)
    results: dict[str, list[bool]] = {}
    threads = [
        threading.Thread(target=_apply_after, args=(barrier, seeded, user, [mine, ids[2]], results))
        for user, mine in ((seeded.teacher, ids[0]), (seeded.ta, ids[1]))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results["teacher"] + results["tara"]) == [False, True, True, True]
    with session_scope() as session:
        rows = session.scalars(
            select(RubricApplication.item_id).where(
                RubricApplication.submission_id == seeded.submission
            )
        ).all()
        assert sorted(rows) == ids
        applied_events = session.scalar(
            select(func.count())
            .select_from(RubricEvent)
            .where(RubricEvent.action == RubricAction.APPLIED)
        )
        assert applied_events == 3
        marks = rubrics.gradings(session=session, submission_ids=[seeded.submission])
        assert marks[seeded.submission].graded_by_name in {"teacher", "tara"}


def _apply_after(
    barrier: threading.Barrier,
    seeded: Seeded,
    user_id: int,
    item_ids: list[int],
    results: dict[str, list[bool]],
) -> None:
    with session_scope() as session:
        course = session.get_one(Course, seeded.course)
        by = session.get_one(User, user_id)
        submission = session.get_one(Submission, seeded.submission)
        barrier.wait(timeout=10)
        results[by.name] = [
            rubrics.apply(session=session, course=course, submission=submission, item_id=i, by=by)
            for i in item_ids
        ]


def bearer(session: Session, user_id: int) -> dict[str, str]:
    user = session.get_one(User, user_id)
    return {"Authorization": f"Bearer {api_tokens.create(session=session, user=user)[0]}"}


def test_the_rubric_api_instructors_edit_staff_apply_and_the_grades_carry_it(
    seeded: Seeded,
) -> None:
    with session_scope() as session:
        teacher, ta, ada = (bearer(session, i) for i in (seeded.teacher, seeded.ta, seeded.learner))
    base = f"/api/courses/{seeded.course}"
    rubric = f"{base}/assignments/{BANK_SLUG}/rubric"
    with in_process_client() as client:
        assert (
            client.post(rubric, headers=ta, json={"points": 1, "description": "x"}).status_code
            == 403
        )
        nan = '{"points": NaN, "description": "x"}'
        bad = client.post(
            rubric, headers={**teacher, "Content-Type": "application/json"}, content=nan
        )
        assert bad.status_code in (400, 422)
        made = client.post(rubric, headers=teacher, json={"points": 2, "description": "shapes"})
        assert made.status_code == 201
        item_id = made.json()["id"]
        assert (
            client.patch(f"{rubric}/{item_id}", headers=ta, json={"points": 3}).status_code == 403
        )
        changed = client.patch(f"{rubric}/{item_id}", headers=teacher, json={"points": 1.5})
        assert (changed.json()["points"], changed.json()["description"]) == (1.5, "shapes")
        apply = f"{base}/submissions/{seeded.submission}/rubric/{item_id}"
        assert client.post(apply, headers=ada).status_code == 403
        first = client.post(apply, headers=ta).json()
        again = client.post(apply, headers=teacher).json()
        assert (first["changed"], again["changed"], again["manual_points"]) == (True, False, 1.5)
        assert again["graded_by_name"] == "tara"
        other = (
            f"/api/courses/{seeded.other_course}/submissions/{seeded.submission}/rubric/{item_id}"
        )
        assert client.post(other, headers=teacher).status_code == 404  # not that course's
        (grades,) = client.get(f"{base}/grades", headers=ta).json()["learners"]
        cell = next(c for c in grades["cells"] if c["problem"] == BANK_SLUG)
        assert (cell["automatic_score"], cell["manual_points"], cell["graded_by"]) == (
            0.5,
            1.5,
            "tara",
        )
        assert cell["points"] == 6.5  # 5 automatic + 1.5
        shown = client.get(rubric, headers=ta).json()
        assert [e["action"] for e in shown["events"]] == [
            "item created",
            "item changed",
            "applied",
            "marked graded",
        ]
        assert client.delete(apply, headers=ta).json()["changed"] is True
        assert client.delete(f"{rubric}/{item_id}", headers=teacher).status_code == 204
        assert client.delete(f"{rubric}/{item_id}", headers=teacher).status_code == 404


def test_the_rubric_page_instructors_edit_tas_read_and_the_assign_form_sets_the_mode(
    seeded: Seeded,
) -> None:
    page = f"/courses/{seeded.course}/assignments/{BANK_SLUG}/rubric"
    with in_process_client() as teacher, in_process_client() as ta:
        token = sign_in(teacher, "teacher")
        made = teacher.post(page, data={"points": "2", "description": "explains the shapes",
                                        "csrf_token": token}, follow_redirects=False)  # fmt: skip
        assert made.status_code == 303
        refused = teacher.post(
            page, data={"points": "two", "description": "x", "csrf_token": token}
        )
        assert refused.status_code == 400 and "points are a number" in refused.text
        with session_scope() as session:
            assignment = assignment_of(session, session.get_one(Course, seeded.course))
            (item,) = rubrics.items(session=session, assignment=assignment)
        teacher.post(f"{page}/{item.id}", data={"points": "1.5", "description": "explains the shapes",
                                                "csrf_token": token})  # fmt: skip
        shown = teacher.get(page).text
        assert "+2 -&gt; +1.5: explains the shapes" in shown and 'name="description"' in shown
        ta_token = sign_in(ta, "tara")
        read = ta.get(page).text
        assert "+1.5" in read and 'name="description"' not in read  # no editing for a TA
        assert ta.post(page, data={"points": "1", "description": "x", "csrf_token": ta_token},
                       follow_redirects=False).status_code == 403  # fmt: skip
        teacher.post(f"{page}/{item.id}/remove", data={"csrf_token": token})
        assert "No rubric items yet." in teacher.get(page).text
        assigned = teacher.post(f"/courses/{seeded.course}/assignments", data={
            "problem": BANK_SLUG, "rubric_mode": "replacing", "csrf_token": token,
        }, follow_redirects=False)  # fmt: skip
        assert assigned.status_code == 303
        assert "<strong>replacing</strong>" in teacher.get(page).text
        with session_scope() as session:
            assert (
                assignment_of(session, session.get_one(Course, seeded.course)).rubric_mode
                == "replacing"
            )


def test_a_learners_timeline_shows_the_rubric_history_beside_the_overrides(
    seeded: Seeded,
) -> None:
    with session_scope() as session:
        course, teacher = (
            session.get_one(Course, seeded.course),
            session.get_one(User, seeded.teacher),
        )
        item = rubrics.add_item(session=session, course=course, assignment=assignment_of(session, course),
                                points=-1, description="a Python loop", by=teacher)  # fmt: skip
        rubrics.apply(session=session, course=course, item_id=item.id, by=teacher,
                      submission=session.get_one(Submission, seeded.submission))  # fmt: skip
    with in_process_client() as client:
        sign_in(client, "teacher")
        text = client.get(f"/courses/{seeded.course}/learners/{seeded.learner}").text
    assert "Rubric history (audit)" in text
    assert f"submission {seeded.submission}: applied · -1: a Python loop" in text
    assert "item created" not in text  # about the rubric, not this learner's work
