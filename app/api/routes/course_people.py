"""The instructor's JSON API for a course's people and deadlines: members and staff,
groups, student ids, and extensions (in bulk, all or nothing: 100 learners' worth in
one request)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status
from starlette.concurrency import run_in_threadpool

from app.api.routes.courses import Instructor, Staff
from app.core.csv_uploads import csv_text
from app.core.request_db import SessionDep
from app.data import extensions, members
from app.models import Extension
from app.reports import gradebook
from app.schemas.courses import (
    ExtensionPublic,
    ExtensionsCreate,
    ExtensionsPublic,
    MemberCreate,
    MemberPublic,
    MemberUpdate,
)

router = APIRouter(prefix="/api/courses", tags=["courses"])
CSV_BODY = {"requestBody": {"content": {"text/csv": {"schema": {"type": "string"}}}}}


@router.post(
    "/{course_id}/members", status_code=status.HTTP_201_CREATED, response_model=MemberPublic
)
def add_member(body: MemberCreate, access: Instructor, session: SessionDep) -> MemberPublic:
    """Add an account as a learner, a ta or an instructor, or change a member's role."""
    user = members.by_name(session=session, name=body.user)
    members.add(session=session, course=access.course, user=user, role=body.role)
    return MemberPublic(id=user.id, name=user.name, role=body.role.value)


@router.delete("/{course_id}/members/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_member(user_id: int, access: Instructor, session: SessionDep) -> Response:
    """Remove a member; their submits stay, and adding them back restores their grades."""
    members.remove(session=session, course=access.course, user_id=user_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.patch("/{course_id}/members/{user_id}", status_code=status.HTTP_204_NO_CONTENT)
def update_member(
    user_id: int, body: MemberUpdate, access: Instructor, session: SessionDep
) -> Response:
    """Put a learner in a group (a section, an accommodation), or in none."""
    members.set_group(session=session, course=access.course, user_id=user_id, group=body.group)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def _csv_body(request: Request) -> str:
    return csv_text(await request.body())


@router.post("/{course_id}/student-ids", openapi_extra=CSV_BODY)
async def map_student_ids(
    request: Request, access: Instructor, session: SessionDep
) -> dict[str, int]:
    """A CSV of ``user,student_id`` rows (a header first): all mapped, or none and
    every bad row named."""
    text = await _csv_body(request)
    mapped = await run_in_threadpool(
        members.student_ids_from_csv, session=session, course=access.course, text=text
    )
    return {"mapped": mapped}


def _public(found: list[Extension]) -> ExtensionsPublic:
    data = [ExtensionPublic.model_validate(e) for e in found]
    return ExtensionsPublic(data=data, count=len(data))


@router.get("/{course_id}/extensions", response_model=ExtensionsPublic)
def list_extensions(access: Staff, session: SessionDep) -> ExtensionsPublic:
    return _public(extensions.of_course(session=session, course=access.course))


@router.post(
    "/{course_id}/extensions", status_code=status.HTTP_201_CREATED, response_model=ExtensionsPublic
)
def grant_extensions(
    body: ExtensionsCreate, access: Instructor, session: SessionDep
) -> ExtensionsPublic:
    """Grant every extension listed (granting again replaces the date), or none: a 400
    names each bad item. Grades are recomputed and sent to a linked LMS again."""
    grants = [extensions.Grant(e.problem, e.due_at, e.user, e.group) for e in body.data]
    made = extensions.grant_all(
        session=session, course=access.course, grants=grants, by=access.user
    )
    gradebook.extensions_changed(session=session, course=access.course, changed=made)
    return _public(made)


@router.post(
    "/{course_id}/extensions.csv",
    status_code=status.HTTP_201_CREATED,
    response_model=ExtensionsPublic,
    openapi_extra=CSV_BODY,
)
async def upload_extensions(
    request: Request, access: Instructor, session: SessionDep
) -> ExtensionsPublic:
    """The same from a CSV (columns user or group, problem, due_at; a header first)."""
    text = await _csv_body(request)

    def grant() -> ExtensionsPublic:  # off the event loop: reading 5,000 rows takes a moment
        made = extensions.from_csv(session=session, course=access.course, text=text, by=access.user)
        gradebook.extensions_changed(session=session, course=access.course, changed=made)
        session.commit()  # the course is held from the grant to here, not while answering
        return _public(made)

    return await run_in_threadpool(grant)


@router.delete("/{course_id}/extensions/{extension_id}", status_code=status.HTTP_204_NO_CONTENT)
def remove_extension(extension_id: int, access: Instructor, session: SessionDep) -> Response:
    problem, learners = extensions.remove(
        session=session, course=access.course, extension_id=extension_id
    )
    gradebook.grades_changed(
        session=session, course=access.course, problem=problem, learner_ids=learners
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)
