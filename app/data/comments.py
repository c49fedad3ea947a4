"""Staff comments on learners' submissions. A comment belongs to the course whose
staff wrote it; its learner reads it beside the submission (beside the lines it is
anchored to, when it is) and is told on the problem's page."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from app.data import notifications
from app.errors import InvalidInputError
from app.models import Course, Submission, SubmissionComment, User

BODY_LIMIT = 5_000


def line_count(code: str) -> int:
    """The lines a comment may anchor to, as the code view numbers them (a last line
    without its newline counts; an empty submission has none)."""
    return len(code.splitlines())


def _check_anchor(code: str, line_start: int | None, line_end: int | None) -> None:
    if line_start is None and line_end is None:
        return
    if line_start is None or line_end is None:
        raise InvalidInputError("A comment on lines needs both its first and its last line.")
    lines = line_count(code)
    if lines == 0:
        raise InvalidInputError("The submission has no lines to comment on: comment on all of it.")
    if not 1 <= line_start <= line_end <= lines:
        raise InvalidInputError(
            f"Lines {line_start} to {line_end} are not in the submission: its lines are "
            f"1 to {lines}, and the first line comes before the last."
        )


def add(
    *,
    session: Session,
    course: Course,
    submission: Submission,
    author: User,
    body: str,
    line_start: int | None = None,
    line_end: int | None = None,
) -> SubmissionComment:
    """A comment on the whole submission, or on its lines ``line_start`` to ``line_end``
    (1-based, inclusive: one line is start == end)."""
    if not body.strip():
        raise InvalidInputError("A comment cannot be empty.")
    if len(body) > BODY_LIMIT:
        raise InvalidInputError(f"A comment is at most {BODY_LIMIT} characters.")
    _check_anchor(submission.code, line_start, line_end)
    comment = SubmissionComment(
        course_id=course.id,
        submission_id=submission.id,
        author_id=author.id,
        author_name=author.name,
        body=body.strip(),
        line_start=line_start,
        line_end=line_end,
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


# Built once: every poll of a finished submission's state asks it (building the IN query
# afresh was 13% of that read's time under 50 clients, bench/hot_reads.py).
_OF_ONE_SUBMISSION = (
    select(SubmissionComment)
    .where(SubmissionComment.submission_id == bindparam("submission_id"))
    .order_by(SubmissionComment.id)
)


def of_submission(*, session: Session, submission_id: int) -> list[SubmissionComment]:
    """One submission's comments, of any course's staff, oldest first."""
    return list(session.scalars(_OF_ONE_SUBMISSION, {"submission_id": submission_id}))


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
