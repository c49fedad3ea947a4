"""Staff grading by hand: comments on a learner's submission and overrides of their
score on an assignment (always with a reason; audited). Teaching assistants may do
both; the learner's timeline page shows them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, status
from fastapi.responses import RedirectResponse, Response

from app.core.request_db import SessionDep
from app.data import comments
from app.errors import InvalidInputError
from app.reports import hand_grading
from app.web.guards import CourseStaff, CsrfChecked

router = APIRouter(include_in_schema=False)


def _timeline(course_id: int, learner_id: int, anchor: str = "") -> RedirectResponse:
    return RedirectResponse(
        f"/courses/{course_id}/learners/{learner_id}{anchor}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


@router.post("/courses/{course_id}/submissions/{submission_id}/comments")
def comment(
    submission_id: int,
    session: SessionDep,
    access: CourseStaff,
    _csrf: CsrfChecked,
    body: Annotated[str, Form()],
) -> Response:
    submission = hand_grading.course_submission(
        session=session, course=access.course, submission_id=submission_id
    )
    comments.add(
        session=session, course=access.course, submission=submission, author=access.user, body=body
    )
    return _timeline(access.course.id, submission.user_id, f"#submission-{submission.id}")


@router.post("/courses/{course_id}/learners/{learner_id}/problems/{slug}/override")
def set_override(
    learner_id: int,
    slug: str,
    session: SessionDep,
    access: CourseStaff,
    _csrf: CsrfChecked,
    reason: Annotated[str, Form()] = "",
    points: Annotated[str, Form()] = "",
    clear: Annotated[str, Form()] = "",
) -> Response:
    value: float | None = None
    if clear != "yes":
        try:
            value = float(points)
        except ValueError:
            raise InvalidInputError("The points must be a number.") from None
    hand_grading.override(
        session=session,
        course=access.course,
        learner_id=learner_id,
        slug=slug,
        points=value,
        reason=reason,
        by=access.user,
    )
    return _timeline(access.course.id, learner_id, f"#grade-{slug}")
