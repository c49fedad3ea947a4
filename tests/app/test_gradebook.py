"""The grade book's combined score (app/reports/gradebook.py): a submit's automatic
score with the rubric items applied to it, added or replacing as the assignment says,
then the late policy, then an override; read in one query however many submits."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from app.core.db import engine, session_scope
from app.data import accounts, assignments, courses, overrides, rubrics
from app.data.assignments import AssignmentSettings
from app.models import Assignment, Course, Submission, User
from app.reports import gradebook, grading_view
from app.vocabulary import LatePolicy, RubricMode
from tests.app.conftest import BANK_SLUG

PASSWORD = "long test password"
DUE = datetime(2030, 1, 10, 12, 0)


def late_course(session: Session) -> tuple[Course, Assignment, User, User, Submission]:
    """10 points, half lost per started day late; ada's one submit scored 0.6, a day late."""
    teacher = accounts.create_user(
        session=session, name="teacher", password=PASSWORD, role="instructor"
    )
    ada = accounts.create_user(session=session, name="ada", password=PASSWORD)
    course = courses.create_course(session=session, name="JAX 101", instructor=teacher)
    settings = AssignmentSettings(
        due_at=DUE, opens_at=datetime(2030, 1, 1), late_policy=LatePolicy.PENALTY,
        penalty_percent=50, max_points=10,
    )  # fmt: skip
    assignment = assignments.assign(
        session=session, course=course, problem=BANK_SLUG, settings=settings
    )
    courses.join_course(session=session, code=course.join_code, user=ada, address="test")
    submission = Submission(user_id=ada.id, problem=BANK_SLUG, code="x\n", mode="submit",
                            status="done", verdict="wrong_answer", score=0.6,
                            created_at=DUE + timedelta(hours=1))  # fmt: skip
    session.add(submission)
    session.flush()
    return course, assignment, teacher, ada, submission


def cell(session: Session, course: Course, ada: User) -> gradebook.Cell:
    return gradebook.grade_matrix(session=session, course=course).cell(ada, BANK_SLUG)


def test_added_items_count_with_the_automatic_points_then_the_late_policy(
    sqlite_database: str,
) -> None:
    with session_scope() as session:
        course, assignment, teacher, ada, submission = late_course(session)
        before = cell(session, course, ada)
        assert (before.final_score, before.manual_points, before.graded_by) == (0.3, None, None)
        item = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=2, description="explains the shapes", by=teacher)  # fmt: skip
        rubrics.apply(session=session, course=course, submission=submission, item_id=item.id, by=teacher)  # fmt: skip
        now = cell(session, course, ada)
        assert now.best_score == pytest.approx(0.8)  # 6 + 2 of 10
        assert now.final_score == pytest.approx(0.4)  # half kept: one day late
        assert (now.automatic_score, now.manual_points, now.graded_by) == (0.6, 2.0, "teacher")
        assert now.scored_submission_id == submission.id
        rubrics.change_item(session=session, course=course, item_id=item.id, points=5,
                            description="explains the shapes", by=teacher)  # fmt: skip
        assert cell(session, course, ada).best_score == 1.0  # 6 + 5 capped at 10
        rubrics.change_item(session=session, course=course, item_id=item.id, points=-8,
                            description="copied the reference", by=teacher)  # fmt: skip
        assert cell(session, course, ada).best_score == 0.0  # never below 0
        rubrics.remove_item(session=session, course=course, item_id=item.id, by=teacher)
        assert cell(session, course, ada).final_score == pytest.approx(0.3)  # automatic again


def test_replacing_items_count_alone_once_graded_by_hand_and_an_override_wins(
    sqlite_database: str,
) -> None:
    with session_scope() as session:
        course, assignment, teacher, ada, submission = late_course(session)
        assignment.rubric_mode = RubricMode.REPLACING
        item = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=9, description="a clean scan", by=teacher)  # fmt: skip
        assert cell(session, course, ada).final_score == pytest.approx(0.3)  # not graded yet
        rubrics.mark_graded(session=session, course=course, submission=submission, by=teacher)
        graded = cell(session, course, ada)
        assert (graded.best_score, graded.final_score, graded.manual_points) == (0.0, 0.0, 0.0)
        rubrics.apply(session=session, course=course, submission=submission, item_id=item.id, by=teacher)  # fmt: skip
        assert cell(session, course, ada).final_score == pytest.approx(0.45)  # 9 of 10, halved
        overrides.record(session=session, course=course, problem=BANK_SLUG, learner_id=ada.id,
                         score=0.7, old_score=0.45, reason="oral exam", by=teacher)  # fmt: skip
        overridden = cell(session, course, ada)
        assert overridden.final_score == 0.7
        assert overridden.computed_score == pytest.approx(0.45)
        assert (
            gradebook.final_score(session=session, course=course, user_id=ada.id, problem=BANK_SLUG)
            == 0.7
        )


def test_a_hand_grading_in_another_course_does_not_count_here(sqlite_database: str) -> None:
    with session_scope() as session:
        course, assignment, teacher, ada, submission = late_course(session)
        other = courses.create_course(session=session, name="Other", instructor=teacher)
        other_assignment = assignments.assign(session=session, course=other, problem=BANK_SLUG,
            settings=AssignmentSettings(opens_at=datetime(2030, 1, 1)))  # fmt: skip
        other_assignment.rubric_mode = RubricMode.REPLACING
        assignment.rubric_mode = RubricMode.REPLACING
        courses.join_course(session=session, code=other.join_code, user=ada, address="test")
        rubrics.mark_graded(session=session, course=other, submission=submission, by=teacher)
        assert cell(session, other, ada).final_score == 0.0  # graded there, with nothing
        assert cell(session, course, ada).final_score == pytest.approx(0.3)  # not here


def test_the_matrix_reads_hand_gradings_in_one_query_however_many_submits(
    sqlite_database: str,
) -> None:
    def statements(session: Session, course: Course) -> int:
        seen: list[str] = []

        def count(*args: object) -> None:
            seen.append(str(args[2]))

        event.listen(engine(), "before_cursor_execute", count)
        try:
            gradebook.grade_matrix(session=session, course=course)
        finally:
            event.remove(engine(), "before_cursor_execute", count)
        return len(seen)

    with session_scope() as session:
        course, assignment, teacher, ada, submission = late_course(session)
        item = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=1, description="x", by=teacher)  # fmt: skip
        rubrics.apply(session=session, course=course, submission=submission, item_id=item.id, by=teacher)  # fmt: skip
        one = statements(session, course)
        for hours in range(2, 7):
            more = Submission(user_id=ada.id, problem=BANK_SLUG, code="y\n", mode="submit",
                              status="done", verdict="wrong_answer", score=0.1,
                              created_at=DUE + timedelta(hours=hours))  # fmt: skip
            session.add(more)
            session.flush()
            rubrics.apply(session=session, course=course, submission=more, item_id=item.id, by=teacher)  # fmt: skip
        assert statements(session, course) == one


def test_two_courses_grading_one_submit_keep_to_their_own_rubric(sqlite_database: str) -> None:
    # ada's submit counts in two courses that assign the same bank problem. The other
    # course's staff grade it first: this course's grading still counts here, and
    # neither course's staff read the other's items, points or graders.
    with session_scope() as session:
        course, assignment, teacher, ada, submission = late_course(session)
        olga = accounts.create_user(session=session, name="olga", password=PASSWORD, role="instructor")  # fmt: skip
        other = courses.create_course(session=session, name="Other", instructor=olga)
        other_assignment = assignments.assign(session=session, course=other, problem=BANK_SLUG,
            settings=AssignmentSettings(opens_at=datetime(2030, 1, 1)))  # fmt: skip
        courses.join_course(session=session, code=other.join_code, user=ada, address="test")
        theirs = rubrics.add_item(session=session, course=other, assignment=other_assignment,
                                  points=-5, description="olga's private note", by=olga)  # fmt: skip
        rubrics.apply(session=session, course=other, submission=submission, item_id=theirs.id, by=olga)  # fmt: skip
        ours = rubrics.add_item(session=session, course=course, assignment=assignment,
                                points=2, description="explains the shapes", by=teacher)  # fmt: skip
        rubrics.apply(session=session, course=course, submission=submission, item_id=ours.id, by=teacher)  # fmt: skip
        here = cell(session, course, ada)
        assert (here.manual_points, here.graded_by) == (2.0, "teacher")
        assert here.best_score == pytest.approx(0.8)  # 6 + 2 of 10, olga's -5 not here
        _entry, grading = grading_view.submission_grading(
            session=session, course=course, assignment=assignment, submission=submission
        )
        assert [item.description for _a, item in grading.applied] == ["explains the shapes"]
        assert grading.graded is not None and grading.graded.graded_by_name == "teacher"
        assert grading.manual_points == 2.0
        row = grading_view.queue(session=session, course=course, assignment=assignment).rows[0]
        assert row.grading is not None and row.grading.manual_points == 2.0
        assert row.grading.graded is not None and row.grading.graded.graded_by_name == "teacher"
