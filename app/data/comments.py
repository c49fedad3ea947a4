"""Staff comments on learners' submissions. A comment belongs to the course whose
staff wrote it; its learner reads it beside the submission and is told on the
problem's page."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.data import notifications
from app.errors import InvalidInputError
from app.models import Course, Submission, SubmissionComment, User

BODY_LIMIT = 5_000


def add(
    *, session: Session, course: Course, submission: Submission, author: User, body: str
) -> SubmissionComment:
    if not body.strip():
        raise InvalidInputError("A comment cannot be empty.")
    if len(body) > BODY_LIMIT:
        raise InvalidInputError(f"A comment is at most {BODY_LIMIT} characters.")
    comment = SubmissionComment(
        course_id=course.id,
        submission_id=submission.id,
        author_id=author.id,
        author_name=author.name,
        body=body.strip(),
    )
    session.add(comment)
    session.flush()
    notifications.comment_added(
        session=session, comment=comment, submission=submission, course=course
    )
    return comment


def on_submissions(
    *, session: Session, submission_ids: list[int], course: Course | None = None
) -> dict[int, list[SubmissionComment]]:
    """Comments per submission, oldest first (of one course's staff, or of any)."""
    if not submission_ids:
        return {}
    query = select(SubmissionComment).where(SubmissionComment.submission_id.in_(submission_ids))
    if course is not None:
        query = query.where(SubmissionComment.course_id == course.id)
    found: dict[int, list[SubmissionComment]] = defaultdict(list)
    for comment in session.scalars(query.order_by(SubmissionComment.id)):
        found[comment.submission_id].append(comment)
    return dict(found)


def for_learner_problem(
    *, session: Session, user: User, problem: str
) -> list[tuple[SubmissionComment, Submission]]:
    """Every staff comment on ``user``'s submissions of ``problem``, newest first."""
    rows = session.execute(
        select(SubmissionComment, Submission)
        .join(Submission, Submission.id == SubmissionComment.submission_id)
        .where(Submission.user_id == user.id, Submission.problem == problem)
        .order_by(SubmissionComment.id.desc())
    )
    return [(comment, submission) for comment, submission in rows]
