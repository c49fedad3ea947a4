"""An assignment's rubric: items (points, negative for a deduction, and what they
mean) that instructors make, change and remove, and that course staff apply to a
learner's submission; a submission marked graded by hand; the audit trail of all of it.

An applied item counts with its *current* points, so changing an item reaches every
submission it was applied to, and a removed item counts no more (its rows stay, so
the audit can name it). Who may do what (instructors edit items, staff apply them) is
the routes' decision; these functions take the person who acts as ``by``.

Two graders at once: each application is its own row, unique per (submission,
item), so two graders applying different items never touch each other's rows, and
two applying the same item race on the unique key alone: the loser's insert fails
inside a SAVEPOINT and it reads "already applied" (no second row, no second event).

Every change arms the LMS rows of the learners whose score it touches (the score is
the grade book's combined one, app/reports/gradebook.py); the caller commits."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from sqlalchemy import Select, and_, delete, exists, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.data import lti_scores
from app.data.course_submissions import within
from app.errors import InvalidInputError, NotFoundError
from app.models import (
    Assignment,
    Course,
    ManualGrading,
    RubricApplication,
    RubricEvent,
    RubricItem,
    Submission,
    User,
    utcnow,
)
from app.vocabulary import RubricAction, RubricMode

POINTS_LIMIT = 1_000.0
DESCRIPTION_LIMIT = 500


def items(*, session: Session, assignment: Assignment, removed: bool = False) -> list[RubricItem]:
    """The assignment's items by position (with ``removed``, the removed ones too)."""
    query = select(RubricItem).where(RubricItem.assignment_id == assignment.id)
    if not removed:
        query = query.where(RubricItem.removed_at.is_(None))
    return list(session.scalars(query.order_by(RubricItem.position, RubricItem.id)))


def add_item(
    *,
    session: Session,
    course: Course,
    assignment: Assignment,
    points: float,
    description: str,
    by: User,
) -> RubricItem:
    """A new item at the end of the assignment's rubric."""
    if assignment.course_id != course.id or assignment.removed_at is not None:
        raise NotFoundError(f"{assignment.problem!r} is not assigned in this course.")
    points, description = _checked(points, description)
    last = session.scalar(
        select(func.max(RubricItem.position)).where(RubricItem.assignment_id == assignment.id)
    )
    item = RubricItem(
        assignment_id=assignment.id,
        position=(last or 0) + 1,
        points=points,
        description=description,
    )
    session.add(item)
    session.flush()
    _event(
        session,
        course,
        assignment.id,
        RubricAction.ITEM_CREATED,
        by,
        item=item.id,
        detail=f"{_signed(points)}: {description}",
    )
    return item


def change_item(
    *, session: Session, course: Course, item_id: int, points: float, description: str, by: User
) -> RubricItem:
    """New points and description; every submission it is applied to counts the new points."""
    item, assignment = _live_item(session, course, item_id)
    points, description = _checked(points, description)
    if points == item.points and description == item.description:
        return item
    before = _signed(item.points)
    after = before if points == item.points else f"{before} -> {_signed(points)}"
    words = (
        description
        if description == item.description
        else (f"{item.description!r} -> {description!r}")
    )
    item.points, item.description = points, description
    session.flush()
    _event(
        session,
        course,
        assignment.id,
        RubricAction.ITEM_CHANGED,
        by,
        item=item.id,
        detail=f"{after}: {words}",
    )
    _arm(session, course, assignment, _learners_with_item(session, item.id))
    return item


def remove_item(*, session: Session, course: Course, item_id: int, by: User) -> None:
    """Take the item off the rubric: it counts on no submission any more (rows kept)."""
    item, assignment = _live_item(session, course, item_id)
    item.removed_at = utcnow()
    session.flush()
    _event(
        session,
        course,
        assignment.id,
        RubricAction.ITEM_REMOVED,
        by,
        item=item.id,
        detail=f"{_signed(item.points)}: {item.description}",
    )
    _arm(session, course, assignment, _learners_with_item(session, item.id))


def apply(
    *, session: Session, course: Course, submission: Submission, item_id: int, by: User
) -> bool:
    """Apply the item to the submission (and mark it graded by ``by`` if nobody had);
    False when it was already applied, by anyone, even a moment ago in another session."""
    assignment = _submission_assignment(session, course, submission)
    item, _ = _course_item(session, course, item_id)
    if item.assignment_id != assignment.id:
        raise NotFoundError(f"Rubric item {item_id} is not on this submission's assignment.")
    if item.removed_at is not None:
        raise InvalidInputError("This rubric item was removed; it can no longer be applied.")
    if _application(session, submission.id, item.id) is not None:
        return False
    try:
        with session.begin_nested():
            session.add(
                RubricApplication(
                    submission_id=submission.id,
                    item_id=item.id,
                    applied_by=by.id,
                    applied_by_name=by.name,
                )
            )
    except IntegrityError:  # the same item, applied by another grader just now
        return False
    _event(
        session,
        course,
        assignment.id,
        RubricAction.APPLIED,
        by,
        item=item.id,
        submission=submission.id,
        detail=f"{_signed(item.points)}: {item.description}",
    )
    _mark(session, course, assignment, submission, by)
    _arm(session, course, assignment, [submission.user_id])
    return True


def unapply(
    *, session: Session, course: Course, submission: Submission, item_id: int, by: User
) -> bool:
    """Take the item off the submission; False when it was not applied."""
    assignment = _submission_assignment(session, course, submission)
    item, _ = _course_item(session, course, item_id)
    if item.assignment_id != assignment.id:
        raise NotFoundError(f"Rubric item {item_id} is not on this submission's assignment.")
    gone = session.execute(
        delete(RubricApplication).where(
            RubricApplication.submission_id == submission.id, RubricApplication.item_id == item.id
        )
    )
    if not getattr(gone, "rowcount", 0):
        return False
    _event(
        session,
        course,
        assignment.id,
        RubricAction.UNAPPLIED,
        by,
        item=item.id,
        submission=submission.id,
        detail=f"{_signed(item.points)}: {item.description}",
    )
    _arm(session, course, assignment, [submission.user_id])
    return True


def mark_graded(*, session: Session, course: Course, submission: Submission, by: User) -> None:
    """Mark the submission graded by hand (kept as the first grader's if it already was)."""
    assignment = _submission_assignment(session, course, submission)
    _mark(session, course, assignment, submission, by)


def applied(
    *, session: Session, submission_ids: list[int], course: Course | None = None
) -> dict[int, list[tuple[RubricApplication, RubricItem]]]:
    """Each submission's applications with their items (removed ones included), by the
    items' positions; one query however many submissions. With ``course``, only that
    course's items: a submit that counts in two courses is graded in each apart."""
    if not submission_ids:
        return {}
    found: dict[int, list[tuple[RubricApplication, RubricItem]]] = defaultdict(list)
    query = (
        select(RubricApplication, RubricItem)
        .join(RubricItem, RubricItem.id == RubricApplication.item_id)
        .where(RubricApplication.submission_id.in_(submission_ids))
    )
    if course is not None:
        query = query.join(Assignment, Assignment.id == RubricItem.assignment_id).where(
            Assignment.course_id == course.id
        )
    rows = session.execute(query.order_by(RubricItem.position, RubricItem.id))
    for application, item in rows:
        found[application.submission_id].append((application, item))
    return dict(found)


def gradings(
    *, session: Session, submission_ids: list[int], course: Course | None = None
) -> dict[int, ManualGrading]:
    """The submissions graded by hand: who and when. With ``course``, those this
    course's staff marked, with the first of them (read from the audit, as a row
    never stored: another course's grader of the same submit is not this course's)."""
    if not submission_ids:
        return {}
    if course is None:
        rows = session.scalars(
            select(ManualGrading).where(ManualGrading.submission_id.in_(submission_ids))
        )
        return {row.submission_id: row for row in rows}
    marks = session.scalars(
        select(RubricEvent)
        .where(
            RubricEvent.course_id == course.id,
            RubricEvent.action == RubricAction.MARKED_GRADED,
            RubricEvent.submission_id.in_(submission_ids),
        )
        .order_by(RubricEvent.id.desc())
    )
    return {  # the first mark wins: read newest first, the oldest overwrites
        mark.submission_id: ManualGrading(
            submission_id=mark.submission_id,
            graded_by=mark.created_by,
            graded_by_name=mark.created_by_name,
            graded_at=mark.created_at,
        )
        for mark in marks
        if mark.submission_id is not None
    }


def events(
    *,
    session: Session,
    course: Course,
    assignment: Assignment | None = None,
    learner_id: int | None = None,
) -> list[RubricEvent]:
    """The course's (or one assignment's, or about one learner's submissions) rubric
    audit trail, oldest first."""
    query = select(RubricEvent).where(RubricEvent.course_id == course.id)
    if assignment is not None:
        query = query.where(RubricEvent.assignment_id == assignment.id)
    if learner_id is not None:
        query = query.join(Submission, Submission.id == RubricEvent.submission_id).where(
            Submission.user_id == learner_id
        )
    return list(session.scalars(query.order_by(RubricEvent.id)))


def manual_points(applied: list[tuple[RubricApplication, RubricItem]]) -> float:
    """The points a submission's applied items give now (removed items give none)."""
    return sum(item.points for _application, item in applied if item.removed_at is None)


def combined_score(
    *, automatic: float, manual_points: float | None, assignment: Assignment
) -> float:
    """A submit's score, 0 to 1: ``automatic`` (0 to 1) with the points of the rubric
    items applied to it (``manual_points`` None: not graded by hand, the automatic score
    stands). ADDED: the items' points added to the automatic points; REPLACING: the
    items' points alone. Either way within 0 and the assignment's points."""
    if manual_points is None:
        return automatic
    most = assignment.max_points
    if assignment.rubric_mode == RubricMode.REPLACING:
        points = manual_points
    else:
        points = automatic * most + manual_points
    return min(max(points, 0.0), most) / most


def graded_by_hand(
    *, session: Session, course: Course, submission_ids: Select[Any] | list[int]
) -> dict[int, tuple[str, float]]:
    """The submits (among ``submission_ids``: ids, or a query of them) staff of this
    course graded by hand: who, and the points of their applied items still on this
    course's rubrics. One query, however many submits (a grading marked in another
    course of the learner's does not count here)."""
    points = (
        select(func.coalesce(func.sum(RubricItem.points), 0.0))
        .join(RubricApplication, RubricApplication.item_id == RubricItem.id)
        .join(Assignment, Assignment.id == RubricItem.assignment_id)
        .where(
            RubricApplication.submission_id == ManualGrading.submission_id,
            RubricItem.removed_at.is_(None),
            Assignment.course_id == course.id,
        )
        .scalar_subquery()
    )
    marked_here = exists().where(
        and_(
            RubricEvent.submission_id == ManualGrading.submission_id,
            RubricEvent.course_id == course.id,
            RubricEvent.action == RubricAction.MARKED_GRADED,
        )
    )
    wanted = (
        submission_ids.scalar_subquery() if isinstance(submission_ids, Select) else submission_ids
    )
    if isinstance(wanted, list) and not wanted:
        return {}
    grader = (  # this course's first grader of it (the row's may be another course's)
        select(RubricEvent.created_by_name)
        .where(
            RubricEvent.submission_id == ManualGrading.submission_id,
            RubricEvent.course_id == course.id,
            RubricEvent.action == RubricAction.MARKED_GRADED,
        )
        .order_by(RubricEvent.id)
        .limit(1)
        .scalar_subquery()
    )
    rows = session.execute(
        select(ManualGrading.submission_id, grader, points).where(
            ManualGrading.submission_id.in_(wanted), marked_here
        )
    )
    return {sid: (name, float(total)) for sid, name, total in rows}


def _checked(points: float, description: str) -> tuple[float, str]:
    try:
        value = float(points)
    except (TypeError, ValueError):
        raise InvalidInputError("A rubric item's points are a number.") from None
    if not math.isfinite(value) or not -POINTS_LIMIT <= value <= POINTS_LIMIT:
        raise InvalidInputError(
            f"A rubric item's points are a number from {-POINTS_LIMIT:g} to {POINTS_LIMIT:g}."
        )
    words = description.strip()
    if not 1 <= len(words) <= DESCRIPTION_LIMIT:
        raise InvalidInputError(
            f"A rubric item needs a description of 1 to {DESCRIPTION_LIMIT} characters."
        )
    return value, words


def _signed(points: float) -> str:
    return f"{points:+g}"


def _course_item(session: Session, course: Course, item_id: int) -> tuple[RubricItem, Assignment]:
    """The item and its assignment, when the assignment is this course's (NotFoundError)."""
    row = session.execute(
        select(RubricItem, Assignment)
        .join(Assignment, Assignment.id == RubricItem.assignment_id)
        .where(RubricItem.id == item_id, Assignment.course_id == course.id)
    ).first()
    if row is None:
        raise NotFoundError(f"No rubric item {item_id} in this course.")
    if row[1].removed_at is not None:
        raise NotFoundError(f"{row[1].problem!r} is not assigned in this course.")
    return row[0], row[1]


def _live_item(session: Session, course: Course, item_id: int) -> tuple[RubricItem, Assignment]:
    """``_course_item``, refusing a removed item."""
    item, assignment = _course_item(session, course, item_id)
    if item.removed_at is not None:
        raise NotFoundError(f"Rubric item {item_id} was removed from the rubric.")
    return item, assignment


def _submission_assignment(session: Session, course: Course, submission: Submission) -> Assignment:
    """The course's assignment the submission counts for (NotFoundError if none)."""
    counted = session.scalar(within(course, Submission.id).where(Submission.id == submission.id))
    assignment = session.scalar(
        select(Assignment).where(
            Assignment.course_id == course.id,
            Assignment.problem == submission.problem,
            Assignment.removed_at.is_(None),
        )
    )
    if counted is None or assignment is None:
        raise NotFoundError(f"No submission {submission.id} in this course.")
    return assignment


def _application(session: Session, submission_id: int, item_id: int) -> RubricApplication | None:
    found: RubricApplication | None = session.scalar(
        select(RubricApplication).where(
            RubricApplication.submission_id == submission_id, RubricApplication.item_id == item_id
        )
    )
    return found


def _mark(
    session: Session, course: Course, assignment: Assignment, submission: Submission, by: User
) -> None:
    """Mark graded by ``by`` unless someone of this course did (a race on the primary
    key: the first wins). The row is the submit's first grader in any course; the
    course's own mark is its MARKED_GRADED event, which the grade book reads."""
    marked_here = session.scalar(
        select(RubricEvent.id).where(
            RubricEvent.course_id == course.id,
            RubricEvent.submission_id == submission.id,
            RubricEvent.action == RubricAction.MARKED_GRADED,
        )
    )
    if marked_here is not None:
        return
    if session.get(ManualGrading, submission.id) is None:
        try:
            with session.begin_nested():
                session.add(
                    ManualGrading(
                        submission_id=submission.id, graded_by=by.id, graded_by_name=by.name
                    )
                )
        except IntegrityError:  # marked by another grader just now
            return
    _event(session, course, assignment.id, RubricAction.MARKED_GRADED, by, submission=submission.id)
    _arm(session, course, assignment, [submission.user_id])


def _event(
    session: Session,
    course: Course,
    assignment_id: int,
    action: RubricAction,
    by: User,
    *,
    item: int | None = None,
    submission: int | None = None,
    detail: str = "",
) -> None:
    session.add(
        RubricEvent(
            course_id=course.id,
            assignment_id=assignment_id,
            item_id=item,
            submission_id=submission,
            action=action,
            detail=detail,
            created_by=by.id,
            created_by_name=by.name,
        )
    )
    session.flush()


def _learners_with_item(session: Session, item_id: int) -> list[int]:
    return sorted(
        set(
            session.scalars(
                select(Submission.user_id)
                .join(RubricApplication, RubricApplication.submission_id == Submission.id)
                .where(RubricApplication.item_id == item_id)
            )
        )
    )


def _arm(session: Session, course: Course, assignment: Assignment, learner_ids: list[int]) -> None:
    """Arm the LMS rows of these learners on the assignment's links in this course (as
    app/reports/gradebook.grades_changed does; this layer cannot import it): the outbox
    recomputes each one's combined score when it sends."""
    if not learner_ids:
        return
    for link_id in lti_scores.course_links(
        session=session, course_id=course.id, problem=assignment.problem
    ):
        lti_scores.arm_all(session=session, link_id=link_id, user_ids=learner_ids)
