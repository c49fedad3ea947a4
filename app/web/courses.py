"""Course pages: list, create, join, the instructor's dashboard and its CSV exports."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.api.deps import SessionDep
from app.core.downloads import csv_response
from app.core.throttle import client_address
from app.data import catalog, courses
from app.errors import DomainError, NotFoundError
from app.reports import exports, gradebook
from app.vocabulary import MemberRole
from app.web.guards import CourseInstructor, CourseMember, CsrfChecked, SignedInUser
from app.web.render import page

router = APIRouter(include_in_schema=False)


def _back(course_id: int | None = None) -> RedirectResponse:
    return RedirectResponse(
        f"/courses/{course_id}" if course_id else "/courses", status_code=status.HTTP_303_SEE_OTHER
    )


@router.get("/courses", response_class=HTMLResponse)
def course_list(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return page(
        request, "courses.html", user, memberships=courses.courses_of(session=session, user=user)
    )


@router.post("/courses")
def create_course(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    name: Annotated[str, Form()],
) -> Response:
    course = courses.create_course(session=session, name=name, instructor=user)
    return _back(course.id)


@router.post("/courses/join")
def join_course(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    code: Annotated[str, Form()],
) -> Response:
    try:
        course = courses.join_course(
            session=session, code=code, user=user, address=client_address(request)
        )
    except DomainError as error:
        return page(
            request,
            "courses.html",
            user,
            error.status,
            memberships=courses.courses_of(session=session, user=user),
            error=str(error),
        )
    return _back(course.id)


@router.get("/courses/{course_id}", response_class=HTMLResponse)
def course_page(
    request: Request,
    session: SessionDep,
    access: CourseMember,
    sort: str = "name",
    q: str = "",
    show: str = "all",
) -> Response:
    course, role, user = access.course, access.role, access.user
    assignments = courses.assignments_of(session=session, course=course)
    titles = {p.slug: p.config.title for _version, p in catalog.live_problems(session)}
    matrix = (
        gradebook.grade_matrix(session=session, course=course)
        if role is MemberRole.INSTRUCTOR
        else None
    )
    return page(
        request,
        "course.html",
        user,
        course=course,
        role=role,
        assignments=assignments,
        titles=titles,
        matrix=matrix,
        rows=matrix.rows(sort=sort, query=q, show=show) if matrix else [],
        view={"sort": sort, "q": q, "show": show},
    )


@router.post("/courses/{course_id}/assignments")
def assign_problem(
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    problem: Annotated[str, Form()],
    due: Annotated[str, Form()] = "",
) -> Response:
    course = access.course
    if catalog.live_version(session, problem) is None:
        raise NotFoundError(f"Unknown problem {problem!r}.")
    try:
        due_at = datetime.fromisoformat(due.strip()) if due.strip() else None
    except ValueError:
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "The due date must look like 2026-12-01T23:59 (UTC) or 2026-12-01T23:59+01:00.",
        ) from None
    courses.assign(session=session, course=course, problem=problem, due_at=due_at)
    return _back(course.id)


@router.get("/courses/{course_id}/grades.csv")
def grades_csv(session: SessionDep, access: CourseInstructor) -> Response:
    course = access.course
    body = exports.matrix_csv(gradebook.grade_matrix(session=session, course=course))
    return csv_response(body, f"grades-course-{course.id}.csv")


@router.get("/courses/{course_id}/submissions.csv")
def submissions_csv(session: SessionDep, access: CourseInstructor) -> Response:
    course = access.course
    body = exports.submissions_csv(session=session, course=course)
    return csv_response(body, f"submissions-course-{course.id}.csv")
