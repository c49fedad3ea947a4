"""A course's submits as the course sees them: whether each counts and how late it
was (the learner's window, app/reports/deadlines.py), the version that graded
each, and the course's own verdicts (a course-scoped regrade's)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.data.course_submissions import RESULT_JSON, SCORE, VERDICT, VERSION_ID, within
from app.models import Course, ProblemVersion, Submission, User
from app.reports import deadlines
from app.reports.windows import CourseWindows
from grader.judging.report import GradeReport


@dataclass(frozen=True)
class TimelineEntry:
    """A submit as the course sees it: its verdict, score and report may be the
    course's own (app/data/course_submissions.py)."""

    submission: Submission
    late: bool
    standing: deadlines.Standing
    version: int | None
    verdict: str | None
    score: float | None
    result_json: str | None

    @property
    def report(self) -> GradeReport | None:
        return GradeReport.from_stored(self.result_json)


def course_submits(
    *, session: Session, course: Course, user_ids: list[int] | None, newest_first: bool
) -> list[TimelineEntry]:
    """The course's submits (of these learners, or all), with late flags and the number
    of the version that graded each."""
    windows = CourseWindows(session, course)
    query = (
        within(course, Submission, ProblemVersion.number, VERDICT, SCORE, RESULT_JSON)
        .outerjoin(ProblemVersion, ProblemVersion.id == VERSION_ID)
        .order_by(Submission.id.desc() if newest_first else Submission.id)
    )
    if user_ids is not None:
        query = query.where(Submission.user_id.in_(user_ids))
    entries = []
    for submission, number, verdict, score, result_json in session.execute(query):
        standing = windows.standing(submission.user_id, submission.problem, submission.created_at)
        entries.append(
            TimelineEntry(submission, standing.late, standing, number, verdict, score, result_json)
        )
    return entries


def timeline(*, session: Session, course: Course, learner: User) -> list[TimelineEntry]:
    """A learner's submits within the course, newest first."""
    return course_submits(session=session, course=course, user_ids=[learner.id], newest_first=True)
