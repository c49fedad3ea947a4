"""The grading view of one assignment, for its course's staff: the learners with the
submission each has to grade, and one submission at a time with its code, its
automatic verdict, the rubric's items as toggles, line comments and "mark graded",
moving from learner to learner with the keyboard (static/grading.js).

A toggle names the state it wants (``applied`` yes or no), never "flip": two graders
on one submission change only the rows of the items they pressed, and pressing twice
is once. Every form works without script; the script sends the same forms with
``Accept: application/json`` and gets the rubric's state back (current points
included, so an instructor's change shows on the next press)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.core.code_lines import highlighted_lines
from app.core.request_db import SessionDep
from app.data import assignments, comments, rubrics
from app.errors import InvalidInputError, NotFoundError
from app.models import Assignment, Course, Submission, User
from app.reports import grading_view, hand_grading
from app.web.guards import CourseStaff, CsrfChecked
from app.web.render import page

router = APIRouter(include_in_schema=False)
BASE = "/courses/{course_id}/assignments/{slug}/grading"


def _submission(
    session: Session, course: Course, slug: str, submission_id: int
) -> tuple[Assignment, Submission]:
    assignment = assignments.assigned(session=session, course=course, slug=slug)
    submission = hand_grading.course_submission(
        session=session, course=course, submission_id=submission_id
    )
    if submission.problem != assignment.problem:
        raise NotFoundError(f"Submission {submission_id} is not one of {slug!r}.")
    return assignment, submission


def _back(course: Course, slug: str, submission_id: int, anchor: str = "") -> RedirectResponse:
    return RedirectResponse(
        f"/courses/{course.id}/assignments/{slug}/grading/{submission_id}{anchor}",
        status_code=status.HTTP_303_SEE_OTHER,
    )


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


@router.get(BASE, response_class=HTMLResponse)
def grading_list(slug: str, request: Request, session: SessionDep, access: CourseStaff) -> Response:
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    return page(
        request,
        "grading.html",
        access.user,
        course=access.course,
        assignment=assignment,
        queue=grading_view.queue(session=session, course=access.course, assignment=assignment),
    )


@router.get(BASE + "/{submission_id}", response_class=HTMLResponse)
def grading_submission(
    slug: str, submission_id: int, request: Request, session: SessionDep, access: CourseStaff
) -> Response:
    course = access.course
    assignment, submission = _submission(session, course, slug, submission_id)
    queue = grading_view.queue(session=session, course=course, assignment=assignment)
    previous, following = queue.neighbours(submission.id)
    entry, grading = grading_view.submission_grading(
        session=session, course=course, assignment=assignment, submission=submission
    )
    return page(
        request,
        "grading_submission.html",
        access.user,
        course=course,
        role=access.role,
        assignment=assignment,
        submission=submission,
        learner=session.get_one(User, submission.user_id),
        entry=entry,
        report=entry.report if entry else None,
        items=rubrics.items(session=session, assignment=assignment),
        grading=grading,
        applied_ids={item.id: a for a, item in grading.applied},
        lines=highlighted_lines(submission.code),
        notes=grading_view.by_line(
            grading_view.staff_comments(session=session, course=course, submission=submission)
        ),
        previous=previous,
        following=following,
        base=f"/courses/{course.id}/assignments/{slug}/grading",
    )


def _state(
    session: Session, assignment: Assignment, submission: Submission, course: Course
) -> dict[str, Any]:
    """The rubric on this submission as the page's script redraws it."""
    _entry, grading = grading_view.submission_grading(
        session=session, course=course, assignment=assignment, submission=submission
    )
    on_it = {item.id: application for application, item in grading.applied}
    combined = grading.combined
    return {
        "items": [
            {
                "id": item.id,
                "points": item.points,
                "description": item.description,
                "applied": item.id in on_it,
                "applied_by": on_it[item.id].applied_by_name if item.id in on_it else None,
            }
            for item in rubrics.items(session=session, assignment=assignment)
        ],
        "manual_points": grading.manual_points,
        "combined_points": None if combined is None else combined * assignment.max_points,
        "max_points": assignment.max_points,
        "graded_by": grading.graded.graded_by_name if grading.graded else None,
    }


@router.post(BASE + "/{submission_id}/items/{item_id}")
def toggle_item(
    slug: str,
    submission_id: int,
    item_id: int,
    request: Request,
    session: SessionDep,
    access: CourseStaff,
    _csrf: CsrfChecked,
    applied: Annotated[str, Form()] = "",
) -> Response:
    """Set one item on or off this submission (``applied``: yes or no)."""
    if applied not in ("yes", "no"):
        raise InvalidInputError("Say whether the item is applied: yes or no.")
    course = access.course
    assignment, submission = _submission(session, course, slug, submission_id)
    change = rubrics.apply if applied == "yes" else rubrics.unapply
    change(session=session, course=course, submission=submission, item_id=item_id, by=access.user)
    if _wants_json(request):
        return JSONResponse(_state(session, assignment, submission, course))
    return _back(course, slug, submission.id, "#rubric")


def _line(value: str, which: str) -> int | None:
    if not value.strip():
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidInputError(f"The {which} line must be a whole number.") from None


@router.post(BASE + "/{submission_id}/comments")
def line_comment(
    slug: str,
    submission_id: int,
    session: SessionDep,
    access: CourseStaff,
    _csrf: CsrfChecked,
    body: Annotated[str, Form()],
    line_start: Annotated[str, Form()] = "",
    line_end: Annotated[str, Form()] = "",
) -> Response:
    """A comment on the submission's lines (or, with none given, on all of it)."""
    course = access.course
    _assignment, submission = _submission(session, course, slug, submission_id)
    start, end = _line(line_start, "first"), _line(line_end, "last")
    if start is not None and end is None:
        end = start  # one line
    made = comments.add(
        session=session,
        course=course,
        submission=submission,
        author=access.user,
        body=body,
        line_start=start,
        line_end=end,
    )
    # A comment is hand grading too: the submission is graded by its first commenter.
    rubrics.mark_graded(session=session, course=course, submission=submission, by=access.user)
    return _back(course, slug, submission.id, f"#comment-{made.id}")


@router.post(BASE + "/{submission_id}/graded")
def mark_graded(
    slug: str,
    submission_id: int,
    request: Request,
    session: SessionDep,
    access: CourseStaff,
    _csrf: CsrfChecked,
) -> Response:
    course = access.course
    assignment, submission = _submission(session, course, slug, submission_id)
    rubrics.mark_graded(session=session, course=course, submission=submission, by=access.user)
    if _wants_json(request):
        return JSONResponse(_state(session, assignment, submission, course))
    return _back(course, slug, submission.id)
