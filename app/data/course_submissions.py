"""A course's view of its learners' work: the submits made *within* the course, each
with the verdict the course sees.

Within the course: a submit (not a run of the samples) by a learner of the
course on a problem it assigns now, made once the assignment opened: the roster
says who, the window says when, so work done before joining counts as long as it
was done in the window. A learner an instructor added by name is the exception:
their work counts (and is shown) from when they were added until they join by
themselves (code, LMS), so adding an account cannot open its earlier code.
Whether a submit after the due date counts, and for how much, is the late
policy's (app/reports/deadlines.py, applied by the grade book); the rows here are
every submit from the opening on.

The verdict the course sees: the course's own (``course_verdicts``, written
when a regrade is applied in this course), else the submission's. A learner
in two courses can so hold two verdicts for one submission, one per course;
their own pages show the submission's verdict (the grading it got, or a
regrade an author or admin applied platform-wide).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, or_, select
from sqlalchemy.orm import aliased

from app.models import Assignment, Course, CourseMember, CourseVerdict, Enrolment, Submission
from app.vocabulary import MemberRole
from grader.child.verdicts import Mode

_own = aliased(CourseVerdict, name="own_verdict")
_member = aliased(CourseMember, name="member")
_enrolled = aliased(Enrolment, name="enrolled")


def _effective(own: Any, submission: Any, label: str) -> ColumnElement[Any]:
    return case((_own.id.is_not(None), own), else_=submission).label(label)


VERDICT = _effective(_own.verdict, Submission.verdict, "verdict")
SCORE = _effective(_own.score, Submission.score, "score")
RESULT_JSON = _effective(_own.result_json, Submission.result_json, "result_json")
VERSION_ID = _effective(_own.problem_version_id, Submission.problem_version_id, "version_id")


def within(course: Course, *columns: Any) -> Select[Any]:
    """SELECT ``columns`` (Submission's and the effective ones above) over the course's
    submits; add your own filters and order."""
    return (
        select(*columns)
        .select_from(Submission)
        .join(
            _member,
            and_(
                _member.user_id == Submission.user_id,
                _member.course_id == course.id,
                _member.role == MemberRole.LEARNER,
            ),
        )
        .join(
            Assignment,
            and_(Assignment.course_id == course.id, Assignment.problem == Submission.problem),
        )
        .outerjoin(_own, and_(_own.submission_id == Submission.id, _own.course_id == course.id))
        .outerjoin(
            _enrolled,
            and_(_enrolled.course_id == course.id, _enrolled.user_id == Submission.user_id),
        )
        .where(
            Submission.mode == Mode.SUBMIT,
            Assignment.removed_at.is_(None),
            Submission.created_at >= Assignment.opens_at,
            or_(_enrolled.id.is_not(None), Submission.created_at >= _member.joined_at),
        )
    )
