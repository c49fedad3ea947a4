"""Score overrides: staff set a learner's score on an assignment, always with a
reason. Rows are appended, never changed: the newest one is in force (a score of
None hands the grade back to the computed one) and all of them together are the
audit trail (who, when, the score before, the score after, why)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import InvalidInputError
from app.models import Course, ScoreOverride, User

REASON_LIMIT = 2_000


def record(
    *,
    session: Session,
    course: Course,
    problem: str,
    learner_id: int,
    score: float | None,
    old_score: float | None,
    reason: str,
    by: User,
) -> ScoreOverride:
    """``score``: 0 to 1 of the assignment's points, or None to clear the override."""
    if not reason.strip():
        raise InvalidInputError("An override needs a reason (it is kept in the audit trail).")
    if len(reason) > REASON_LIMIT:
        raise InvalidInputError(f"A reason is at most {REASON_LIMIT} characters.")
    if score is not None and not 0.0 <= score <= 1.0:
        raise InvalidInputError("An overridden score is from 0 to the assignment's points.")
    row = ScoreOverride(
        course_id=course.id,
        problem=problem,
        user_id=learner_id,
        score=score,
        old_score=old_score,
        reason=reason.strip(),
        created_by=by.id,
        created_by_name=by.name,
    )
    session.add(row)
    session.flush()
    return row


def history(
    *, session: Session, course: Course, learner_id: int | None = None
) -> list[ScoreOverride]:
    """The course's overrides (of one learner, or all), oldest first."""
    query = select(ScoreOverride).where(ScoreOverride.course_id == course.id)
    if learner_id is not None:
        query = query.where(ScoreOverride.user_id == learner_id)
    return list(session.scalars(query.order_by(ScoreOverride.id)))


def in_force(overrides: list[ScoreOverride]) -> dict[tuple[int, str], ScoreOverride]:
    """(learner, problem) -> the override in force, from ``history`` (oldest first)."""
    latest: dict[tuple[int, str], ScoreOverride] = {}
    for row in overrides:
        latest[(row.user_id, row.problem)] = row
    return {key: row for key, row in latest.items() if row.score is not None}
