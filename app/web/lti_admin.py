"""The LMS pages of staff: an admin's registrations (platforms, the values an LMS admin
enters, a Dynamic Registration link, the signing key, every course's grade outbox),
and a course's LMS page for its instructors (the linked LMS course, its links, the
roster, and which grades are pending, failed with the LMS's answer, or sent)."""

from __future__ import annotations

import ipaddress
from typing import Annotated
from urllib.parse import urlparse

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.config import settings
from app.core.request_db import SessionDep
from app.errors import DomainError, InvalidInputError
from app.lti import keys, outbox, platforms, registration, roster
from app.lti import status as lms_status
from app.lti.http import PlatformCallError
from app.lti.launch import LaunchError
from app.web.guards import Admin, CourseInstructor, CsrfChecked
from app.web.lti_answers import base_url
from app.web.render import page

router = APIRouter(include_in_schema=False)
UrlField = Annotated[str, Form(max_length=500)]


def address_warnings(tool_url: str) -> list[str]:
    """Why an LMS could not use ``tool_url`` (the public URL, or this request's own): an
    LMS launches and fetches keys from the outside, over HTTPS."""
    parsed = urlparse(tool_url)
    host = (parsed.hostname or "").lower()
    warnings = []
    if parsed.scheme != "https":
        warnings.append(
            f"it is {parsed.scheme or 'not'} HTTP, not HTTPS: Canvas and Moodle refuse to"
            " launch a tool or fetch its keys over plain HTTP"
        )
    try:
        loopback = (
            host == "localhost"
            or host.endswith(".localhost")
            or ipaddress.ip_address(host).is_loopback
        )
    except ValueError:
        loopback = False
    if loopback:
        warnings.append(f"{host} is this machine's loopback address: no LMS can reach it")
    return warnings


def _admin_page(
    request: Request, session: SessionDep, admin: Admin, code: int = 200, **extra: object
) -> Response:
    registered = [
        (platform, platforms.deployments_of(session=session, platform=platform))
        for platform in platforms.all_platforms(session=session)
    ]
    tool = base_url(request)
    return page(
        request,
        "admin_lti.html",
        admin,
        code,
        platforms=registered,
        tool=tool,
        address_warnings=address_warnings(tool),
        public_url_set=settings.public_url is not None,
        outbox=lms_status.outbox(session),
        **extra,
    )


@router.get("/admin/lti", response_class=HTMLResponse)
def admin_lti(request: Request, session: SessionDep, admin: Admin) -> Response:
    return _admin_page(request, session, admin)


@router.post("/admin/lti/platforms", response_class=HTMLResponse)
def add_platform(
    request: Request,
    session: SessionDep,
    admin: Admin,
    _csrf: CsrfChecked,
    issuer: UrlField,
    client_id: Annotated[str, Form(max_length=255)],
    auth_login_url: UrlField,
    token_url: UrlField,
    jwks_url: UrlField,
    deployment_ids: Annotated[str, Form(max_length=2000)] = "",
    name: Annotated[str, Form(max_length=120)] = "",
) -> Response:
    try:
        platforms.add(
            session=session,
            platform=platforms.PlatformIn(
                issuer=issuer.strip(),
                client_id=client_id.strip(),
                auth_login_url=auth_login_url.strip(),
                token_url=token_url.strip(),
                jwks_url=jwks_url.strip(),
                deployment_ids=tuple(deployment_ids.split()),
                name=name.strip(),
            ),
        )
    except DomainError as error:
        session.rollback()
        return _admin_page(request, session, admin, 400, error=str(error))
    return RedirectResponse("/admin/lti", status_code=status.HTTP_303_SEE_OTHER)


@router.post("/admin/lti/platforms/{platform_id}/remove")
def remove_platform(
    session: SessionDep, _admin: Admin, _csrf: CsrfChecked, platform_id: int
) -> Response:
    platforms.remove(session=session, platform_id=platform_id)
    return RedirectResponse("/admin/lti", status_code=status.HTTP_303_SEE_OTHER)


@router.post("/admin/lti/registration-link", response_class=HTMLResponse)
def registration_link(
    request: Request,
    session: SessionDep,
    admin: Admin,
    _csrf: CsrfChecked,
    note: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    link = f"{base_url(request)}/lti/register?invitation={registration.invitation(note)}"
    return _admin_page(request, session, admin, registration_link=link)


@router.post("/admin/lti/rotate-key")
def rotate_key(session: SessionDep, _admin: Admin, _csrf: CsrfChecked) -> Response:
    keys.rotate(session)
    return RedirectResponse("/admin/lti", status_code=status.HTTP_303_SEE_OTHER)


@router.post("/admin/lti/resend")
def resend_all(session: SessionDep, _admin: Admin, _csrf: CsrfChecked) -> Response:
    outbox.resend(session)  # the server's outbox thread sends them within seconds
    return RedirectResponse("/admin/lti", status_code=status.HTTP_303_SEE_OTHER)


def _course_page(
    request: Request,
    session: SessionDep,
    access: CourseInstructor,
    code: int = 200,
    **extra: object,
) -> Response:
    return page(
        request,
        "course_lms.html",
        access.user,
        code,
        course=access.course,
        link=lms_status.course_link(session, course_id=access.course.id),
        outbox=lms_status.outbox(session, course_id=access.course.id),
        **extra,
    )


@router.get("/courses/{course_id}/lms", response_class=HTMLResponse)
def course_lms(request: Request, session: SessionDep, access: CourseInstructor) -> Response:
    return _course_page(request, session, access)


@router.post("/courses/{course_id}/lms/roster", response_class=HTMLResponse)
def sync_roster(
    request: Request, session: SessionDep, access: CourseInstructor, _csrf: CsrfChecked
) -> Response:
    linked = lms_status.course_link(session, course_id=access.course.id)
    try:
        if linked is None:
            raise InvalidInputError("This course is not linked to an LMS course.")
        synced = roster.sync(session, course=access.course, context=linked.context)
    except (PlatformCallError, LaunchError, DomainError) as error:
        session.rollback()
        return _course_page(
            request, session, access, 400, error=f"The roster was not synced: {error}"
        )
    return _course_page(
        request, session, access, notice=f"Roster synced: {synced.members} members from the LMS."
    )


@router.post("/courses/{course_id}/lms/resend")
def resend_course(session: SessionDep, access: CourseInstructor, _csrf: CsrfChecked) -> Response:
    outbox.resend(session, course_id=access.course.id)
    return RedirectResponse(
        f"/courses/{access.course.id}/lms", status_code=status.HTTP_303_SEE_OTHER
    )
