"""The course's people and their deadlines: members and staff (add, remove, roles,
groups, student ids) and extensions (one at a time or by CSV upload). Staff see
them; instructors change them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Form, Request, UploadFile, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from app.core.csv_uploads import CSV_UPLOAD_BYTES, csv_text
from app.core.request_db import SessionDep
from app.data import assignments, courses, extensions, members
from app.data.courses import CourseAccess, members_of
from app.errors import DomainError, InvalidInputError
from app.reports import gradebook
from app.vocabulary import MemberRole
from app.web.guards import CourseInstructor, CourseStaff, CsrfChecked
from app.web.render import page

router = APIRouter(include_in_schema=False)


def _people_page(
    request: Request,
    session: SessionDep,
    access: CourseAccess,
    status_code: int = 200,
    **extra: object,
) -> Response:
    course = access.course
    everyone = members_of(session=session, course=course)
    names = {user.id: user.name for user, _role in everyone}
    found = assignments.assignments_of(session=session, course=course)
    return page(
        request,
        "course_people.html",
        access.user,
        status_code,
        course=course,
        role=access.role,
        members=everyone,
        groups=members.groups_of(session=session, course=course),
        group_names=members.group_names(session=session, course=course),
        student_ids=members.student_ids_of(session=session, course=course),
        assignments=found,
        due_dates={a.problem: a.due_at for a in found if a.due_at is not None},
        extensions=extensions.of_course(session=session, course=course),
        names=names,
        roles=[r.value for r in MemberRole],
        **extra,
    )


def _again(course_id: int) -> RedirectResponse:
    return RedirectResponse(f"/courses/{course_id}/people", status_code=status.HTTP_303_SEE_OTHER)


@router.get("/courses/{course_id}/people", response_class=HTMLResponse)
def people(request: Request, session: SessionDep, access: CourseStaff) -> Response:
    return _people_page(request, session, access)


async def _upload_text(upload: UploadFile) -> str:
    return csv_text(await upload.read(CSV_UPLOAD_BYTES + 1))


def _changing(
    request: Request, session: SessionDep, access: CourseAccess, change: Callable[[], object]
) -> Response:
    """Run ``change`` (a callable); a refusal is shown on the page, nothing saved."""
    try:
        change()
    except DomainError as error:
        session.rollback()
        return _people_page(request, session, access, error.status, error=str(error))
    return _again(access.course.id)


@router.post("/courses/{course_id}/members")
def add_member(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    user: Annotated[str, Form()],
    role: Annotated[str, Form()] = MemberRole.LEARNER,
) -> Response:
    def change() -> None:
        if role not in tuple(MemberRole):
            raise InvalidInputError("A member is an instructor, a ta or a learner.")
        found = members.by_name(session=session, name=user)
        members.add(session=session, course=access.course, user=found, role=MemberRole(role))

    return _changing(request, session, access, change)


@router.post("/courses/{course_id}/members/{user_id}/remove")
def remove_member(
    user_id: int,
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
) -> Response:
    return _changing(
        request,
        session,
        access,
        lambda: members.remove(session=session, course=access.course, user_id=user_id),
    )


@router.post("/courses/{course_id}/members/{user_id}/group")
def set_group(
    user_id: int,
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    group: Annotated[str, Form()] = "",
) -> Response:
    return _changing(
        request,
        session,
        access,
        lambda: members.set_group(
            session=session, course=access.course, user_id=user_id, group=group
        ),
    )


@router.post("/courses/{course_id}/student-id-required")
def set_student_id_required(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    required: Annotated[bool, Form()] = False,
) -> Response:
    return _changing(
        request,
        session,
        access,
        lambda: courses.set_requires_student_id(
            session=session, course=access.course, required=required
        ),
    )


@router.post("/courses/{course_id}/student-ids")
async def upload_student_ids(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    file: UploadFile,
) -> Response:
    def change(text: str) -> None:
        members.student_ids_from_csv(session=session, course=access.course, text=text)

    return await _uploading(request, session, access, file, change)


async def _uploading(
    request: Request,
    session: SessionDep,
    access: CourseAccess,
    file: UploadFile,
    change: Callable[[str], object],
) -> Response:
    """Read an uploaded CSV, then apply ``change`` to its text off the event loop (a
    5,000-row upload must not stall every other request); a refusal is shown on the
    page, nothing saved."""
    try:
        text = await _upload_text(file)
    except DomainError as error:
        return _people_page(request, session, access, error.status, error=str(error))
    return await run_in_threadpool(_changing, request, session, access, lambda: change(text))


@router.post("/courses/{course_id}/extensions")
def grant_extension(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    problem: Annotated[str, Form()] = "",
    due: Annotated[str, Form()] = "",
    user: Annotated[str, Form()] = "",
    group: Annotated[str, Form()] = "",
) -> Response:
    def change() -> None:
        grant = extensions.Grant(problem, extensions.parse_due(due), user, group)
        made = extensions.grant_all(
            session=session, course=access.course, grants=[grant], by=access.user
        )
        gradebook.extensions_changed(session=session, course=access.course, changed=made)

    return _changing(request, session, access, change)


@router.post("/courses/{course_id}/extensions/upload")
async def upload_extensions(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
    file: UploadFile,
) -> Response:
    def change(text: str) -> None:
        made = extensions.from_csv(session=session, course=access.course, text=text, by=access.user)
        gradebook.extensions_changed(session=session, course=access.course, changed=made)

    return await _uploading(request, session, access, file, change)


@router.post("/courses/{course_id}/extensions/{extension_id}/remove")
def remove_extension(
    extension_id: int,
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    _csrf: CsrfChecked,
) -> Response:
    def change() -> None:
        problem, learners = extensions.remove(
            session=session, course=access.course, extension_id=extension_id
        )
        gradebook.grades_changed(
            session=session, course=access.course, problem=problem, learner_ids=learners
        )

    return _changing(request, session, access, change)
