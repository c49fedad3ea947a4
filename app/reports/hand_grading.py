"""Grading by hand, for the pages and the API alike: the course's submits staff may
comment on, and overriding a learner's points on an assignment (the score it
replaces is kept in the override's audit row; the LMS gets the new one)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.data import assignments, courses, overrides
from app.data.course_submissions import within
from app.errors import InvalidInputError, NotFoundError
from app.models import Course, ScoreOverride, Submission, User
from app.reports import gradebook


def course_submission(*, session: Session, course: Course, submission_id: int) -> Submission:
    """A submit the course counts in its views (its learner's, on an assigned problem)."""
    found: Submission | None = session.scalar(
        within(course, Submission).where(Submission.id == submission_id)
    )
    if found is None:
        raise NotFoundError(f"No submission {submission_id} in this course.")
    return found


def override(
    *,
    session: Session,
    course: Course,
    learner_id: int,
    slug: str,
    points: float | None,
    reason: str,
    by: User,
) -> ScoreOverride:
    """Set (or, with ``points`` None, clear) a learner's points on an assignment."""
    learner = courses.course_learner(session=session, course=course, learner_id=learner_id)
    assignment = assignments.assigned(session=session, course=course, slug=slug)
    if points is not None and not 0.0 <= points <= assignment.max_points:
        raise InvalidInputError(
            f"The points are from 0 to the assignment's {assignment.max_points:g}."
        )
    matrix = gradebook.grade_matrix(
        session=session, course=course, learner_ids=[learner.id], problem=slug
    )
    row = overrides.record(
        session=session,
        course=course,
        problem=slug,
        learner_id=learner.id,
        score=None if points is None else points / assignment.max_points,
        old_score=matrix.cell(learner, slug).final_score,
        reason=reason,
        by=by,
    )
    gradebook.grades_changed(session=session, course=course, problem=slug, learner_ids=[learner.id])
    return row
