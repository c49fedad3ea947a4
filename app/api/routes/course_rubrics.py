"""The rubric JSON API: an assignment's rubric items (instructors make, change and
remove them; staff read them with their audit trail), and applying them to a learner's
submission (staff: instructors and teaching assistants). Each change arms the LMS rows
it touches (app/data/rubrics.py); the request's session commits."""

from __future__ import annotations

from fastapi import APIRouter, Response, status
from sqlalchemy.orm import Session

from app.api.routes.courses import Instructor, Staff
from app.core.request_db import SessionDep
from app.data import assignments, rubrics
from app.errors import NotFoundError
from app.models import Assignment, Course, RubricItem, Submission
from app.reports import hand_grading
from app.schemas.rubrics import (
    AppliedItemPublic,
    RubricEventPublic,
    RubricItemCreate,
    RubricItemPublic,
    RubricItemUpdate,
    RubricPublic,
    SubmissionRubricPublic,
)
from app.vocabulary import RubricMode

router = APIRouter(prefix="/api/courses", tags=["rubrics"])


def _item_of(session: Session, assignment: Assignment, item_id: int) -> RubricItem:
    for item in rubrics.items(session=session, assignment=assignment, removed=True):
        if item.id == item_id:
            return item
    raise NotFoundError(f"No rubric item {item_id} on {assignment.problem!r}.")


@router.get("/{course_id}/assignments/{slug}/rubric", response_model=RubricPublic)
def get_rubric(slug: str, access: Staff, session: SessionDep) -> RubricPublic:
    """The assignment's rubric items (removed ones included, marked) and its audit trail."""
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    return RubricPublic(
        problem=assignment.problem,
        rubric_mode=RubricMode(assignment.rubric_mode),
        max_points=assignment.max_points,
        items=[
            RubricItemPublic.model_validate(i)
            for i in rubrics.items(session=session, assignment=assignment, removed=True)
        ],
        events=[
            RubricEventPublic.model_validate(e)
            for e in rubrics.events(session=session, course=access.course, assignment=assignment)
        ],
    )


@router.post(
    "/{course_id}/assignments/{slug}/rubric",
    status_code=status.HTTP_201_CREATED,
    response_model=RubricItemPublic,
)
def add_item(
    slug: str, body: RubricItemCreate, access: Instructor, session: SessionDep
) -> RubricItemPublic:
    """A new item at the end of the rubric (instructors)."""
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    made = rubrics.add_item(
        session=session,
        course=access.course,
        assignment=assignment,
        points=body.points,
        description=body.description,
        by=access.user,
    )
    return RubricItemPublic.model_validate(made)


@router.patch("/{course_id}/assignments/{slug}/rubric/{item_id}", response_model=RubricItemPublic)
def change_item(
    slug: str, item_id: int, body: RubricItemUpdate, access: Instructor, session: SessionDep
) -> RubricItemPublic:
    """New points or description; every submission it is applied to counts the new points
    (and is sent to a linked LMS again)."""
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    item = _item_of(session, assignment, item_id)
    changed = rubrics.change_item(
        session=session,
        course=access.course,
        item_id=item.id,
        points=item.points if body.points is None else body.points,
        description=item.description if body.description is None else body.description,
        by=access.user,
    )
    return RubricItemPublic.model_validate(changed)


@router.delete(
    "/{course_id}/assignments/{slug}/rubric/{item_id}", status_code=status.HTTP_204_NO_CONTENT
)
def remove_item(slug: str, item_id: int, access: Instructor, session: SessionDep) -> Response:
    """Take the item off the rubric: it counts on no submission any more (audited)."""
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    item = _item_of(session, assignment, item_id)
    rubrics.remove_item(session=session, course=access.course, item_id=item.id, by=access.user)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _on(
    session: Session, course: Course, submission: Submission, changed: bool
) -> SubmissionRubricPublic:
    ids = [submission.id]
    found = rubrics.applied(session=session, submission_ids=ids, course=course).get(
        submission.id, []
    )
    grading = rubrics.gradings(session=session, submission_ids=ids, course=course).get(
        submission.id
    )
    return SubmissionRubricPublic(
        submission_id=submission.id,
        changed=changed,
        graded_by_name=grading.graded_by_name if grading else None,
        graded_at=grading.graded_at if grading else None,
        manual_points=rubrics.manual_points(found),
        applied=[
            AppliedItemPublic(
                item=RubricItemPublic.model_validate(item),
                applied_by_name=application.applied_by_name,
                applied_at=application.applied_at,
            )
            for application, item in found
        ],
    )


@router.get(
    "/{course_id}/submissions/{submission_id}/rubric", response_model=SubmissionRubricPublic
)
def submission_rubric(
    submission_id: int, access: Staff, session: SessionDep
) -> SubmissionRubricPublic:
    """The items applied to the submission, who graded it, its rubric points now."""
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    return _on(session, access.course, submission, changed=False)


@router.post(
    "/{course_id}/submissions/{submission_id}/rubric/{item_id}",
    response_model=SubmissionRubricPublic,
)
def apply_item(
    submission_id: int, item_id: int, access: Staff, session: SessionDep
) -> SubmissionRubricPublic:
    """Apply the item (staff); applying it again changes nothing (``changed`` false)."""
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    changed = rubrics.apply(
        session=session, course=access.course, submission=submission, item_id=item_id,
        by=access.user,
    )  # fmt: skip
    return _on(session, access.course, submission, changed)


@router.delete(
    "/{course_id}/submissions/{submission_id}/rubric/{item_id}",
    response_model=SubmissionRubricPublic,
)
def unapply_item(
    submission_id: int, item_id: int, access: Staff, session: SessionDep
) -> SubmissionRubricPublic:
    """Take the item off the submission (staff)."""
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    changed = rubrics.unapply(
        session=session, course=access.course, submission=submission, item_id=item_id,
        by=access.user,
    )  # fmt: skip
    return _on(session, access.course, submission, changed)


@router.post(
    "/{course_id}/submissions/{submission_id}/graded", response_model=SubmissionRubricPublic
)
def mark_graded(submission_id: int, access: Staff, session: SessionDep) -> SubmissionRubricPublic:
    """Mark the submission graded by hand (under a replacing rubric: its items' points
    become its score, none applied: 0)."""
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    before = rubrics.gradings(session=session, submission_ids=[submission.id], course=access.course)
    rubrics.mark_graded(
        session=session, course=access.course, submission=submission, by=access.user
    )
    return _on(session, access.course, submission, changed=submission.id not in before)
