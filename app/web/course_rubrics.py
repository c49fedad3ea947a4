"""The rubric editor of an assignment: its items (instructors add, change and remove
them; teaching assistants read them, they apply them on the grading page) and the
rubric's audit trail, beside a link to the overrides' audit."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.request_db import SessionDep
from app.data import assignments, catalog, rubrics
from app.errors import InvalidInputError, NotFoundError
from app.vocabulary import MemberRole
from app.web.guards import CourseInstructor, CourseStaff, CsrfChecked
from app.web.render import page

router = APIRouter(include_in_schema=False)


def _editor(course_id: int, slug: str) -> RedirectResponse:
    return RedirectResponse(
        f"/courses/{course_id}/assignments/{slug}/rubric", status_code=status.HTTP_303_SEE_OTHER
    )


def _points(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InvalidInputError("A rubric item's points are a number, e.g. 2 or -0.5.") from None


@router.get("/courses/{course_id}/assignments/{slug}/rubric", response_class=HTMLResponse)
def rubric_page(slug: str, request: Request, session: SessionDep, access: CourseStaff) -> Response:
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    version = catalog.live_version(session=session, slug=slug)
    return page(
        request,
        "course_rubric.html",
        access.user,
        course=access.course,
        assignment=assignment,
        title=version.title if version else slug,
        items=rubrics.items(session=session, assignment=assignment, removed=True),
        events=rubrics.events(session=session, course=access.course, assignment=assignment),
        editable=access.role == MemberRole.INSTRUCTOR,
    )


@router.post("/courses/{course_id}/assignments/{slug}/rubric")
def add_item(
    slug: str,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    points: Annotated[str, Form()] = "",
    description: Annotated[str, Form()] = "",
) -> Response:
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    rubrics.add_item(
        session=session,
        course=access.course,
        assignment=assignment,
        points=_points(points),
        description=description,
        by=access.user,
    )
    return _editor(access.course.id, slug)


def _check_on(session: SessionDep, access: CourseInstructor, slug: str, item_id: int) -> None:
    assignment = assignments.assigned(session=session, course=access.course, slug=slug)
    if item_id not in {i.id for i in rubrics.items(session=session, assignment=assignment)}:
        raise NotFoundError(f"No rubric item {item_id} on {slug!r}.")


@router.post("/courses/{course_id}/assignments/{slug}/rubric/{item_id}")
def change_item(
    slug: str,
    item_id: int,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    points: Annotated[str, Form()] = "",
    description: Annotated[str, Form()] = "",
) -> Response:
    _check_on(session, access, slug, item_id)
    rubrics.change_item(
        session=session,
        course=access.course,
        item_id=item_id,
        points=_points(points),
        description=description,
        by=access.user,
    )
    return _editor(access.course.id, slug)


@router.post("/courses/{course_id}/assignments/{slug}/rubric/{item_id}/remove")
def remove_item(
    slug: str, item_id: int, session: SessionDep, access: CourseInstructor, _csrf: CsrfChecked
) -> Response:
    _check_on(session, access, slug, item_id)
    rubrics.remove_item(session=session, course=access.course, item_id=item_id, by=access.user)
    return _editor(access.course.id, slug)
