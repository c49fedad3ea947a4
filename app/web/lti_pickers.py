"""The LTI pages where an instructor picks problems: the Deep Linking picker (problems
to add to the LMS course, answered to the LMS as a signed response) and, for a link
the LMS made without one, the problem it opens. A deep-linking request waits on the
server, named by a random id in the browser's session (app/lti/deep_linking.py); a
link waiting for its problem waits in the session itself (nothing is signed for it,
and its instructor is checked again when it is set)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlparse

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.core.body_limits_and_headers import content_security_policy, frame_ancestors
from app.core.config import settings
from app.core.request_db import SessionDep
from app.data import assignments, catalog, courses
from app.lti import deep_linking, provisioning
from app.lti.claims import DeepLinkingSettings, Launch
from app.lti.launch import LaunchError
from app.models import Course, LtiPlatform, User
from app.vocabulary import MemberRole
from app.web.guards import CsrfChecked, SignedInUser
from app.web.lti_answers import base_url, refused
from app.web.render import page

router = APIRouter(include_in_schema=False)
DEEP_LINK_KEY = "lti_deep_link"
PENDING_LINK_KEY = "lti_pending_link"


def pending_link(validated: Launch, course: Course) -> dict[str, object]:
    return {
        "course_id": course.id,
        "resource_link_id": validated.resource_link_id,
        "lineitem_url": validated.services.lineitem_url,
    }


def start_deep_linking(
    request: Request, session: Session, validated: Launch, course: Course, user: User
) -> Response:
    if validated.role is not MemberRole.INSTRUCTOR or validated.deep_linking is None:
        return refused(request, "Only the course's instructors add jaxjudge problems to it.", 403)
    request.session[DEEP_LINK_KEY] = deep_linking.wait_for_pick(
        session=session, launch=validated, user=user, course=course
    )
    return RedirectResponse("/lti/deep-link", status_code=status.HTTP_303_SEE_OTHER)


def _problems(session: Session, course_id: int | None) -> list[tuple[str, str, str]]:
    """The bank's published problems and the LMS course's own (``course_id``)."""
    return [
        (p.slug, p.config.title, p.config.track)
        for _v, p in catalog.live_problems(session=session, course_id=course_id)
    ]


_NOTHING_WAITING = "No LMS is waiting for problems; start from the LMS."


@router.get("/lti/deep-link", response_class=HTMLResponse)
def deep_link_picker(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    pending = deep_linking.waiting(
        session=session, token=request.session.get(DEEP_LINK_KEY), user=user
    )
    if pending is None:
        return refused(request, _NOTHING_WAITING)
    course = session.get(Course, pending.course_id)
    assigned = (
        {a.problem for a in assignments.assignments_of(session=session, course=course)}
        if course
        else set()
    )
    # The course's existing assignments first: adding one again links the LMS to it.
    problems = sorted(_problems(session, pending.course_id), key=lambda p: p[0] not in assigned)
    return page(
        request,
        "lti_deep_link.html",
        user,
        problems=problems,
        assigned=assigned,
        multiple=pending.accept_multiple,
    )


@router.post("/lti/deep-link", response_class=HTMLResponse)
def deep_link_response(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    problem: Annotated[list[str] | None, Form()] = None,
    points: Annotated[float, Form(gt=0, le=10000)] = deep_linking.DEFAULT_MAXIMUM,
) -> Response:
    """The signed response, at most one per request (app/lti/deep_linking.py): spent
    and committed before it is signed, and only for an instructor of the course now."""
    pending = deep_linking.waiting(
        session=session, token=request.session.pop(DEEP_LINK_KEY, None), user=user
    )
    if pending is None:
        return refused(request, _NOTHING_WAITING)
    platform = session.get(LtiPlatform, pending.platform_id)
    titles = {slug: title for slug, title, _track in _problems(session, pending.course_id)}
    picked = [slug for slug in (problem or []) if slug in titles]
    if platform is None or not picked:
        return refused(request, "Pick at least one problem (start again from the LMS).")
    if not deep_linking.spend(session=session, request=pending):
        return refused(request, _NOTHING_WAITING)
    teaches = deep_linking.still_teaches(session=session, request=pending)
    session.commit()  # spent whatever follows: another copy of the cookie finds it used
    if not teaches:
        return refused(request, "Only the course's instructors add jaxjudge problems to it.", 403)
    items = [
        deep_linking.content_item(
            slug=slug,
            title=titles[slug],
            launch_url=f"{base_url(request)}/lti/launch",
            score_maximum=points,
        )
        for slug in picked
    ]
    token = deep_linking.response_jwt(
        platform=platform,
        deployment_id=pending.deployment_id,
        settings=DeepLinkingSettings(
            return_url=pending.return_url,
            accept_multiple=pending.accept_multiple,
            data=pending.data,
        ),
        items=items,
    )
    return _post_to(request, user, pending.return_url, {"JWT": token})


def _post_to(request: Request, user: User, url: str, fields: dict[str, str]) -> Response:
    """A page whose script posts ``fields`` to ``url`` (another site: the CSP allows it)."""
    response = page(request, "lti_post.html", user, url=url, fields=fields)
    origin = "{0.scheme}://{0.netloc}".format(urlparse(url))
    response.headers["content-security-policy"] = content_security_policy(
        frame_ancestors=frame_ancestors(settings.frame_origins), form_action=f"'self' {origin}"
    )
    return response


@router.get("/lti/link", response_class=HTMLResponse)
def link_picker(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    if not isinstance(request.session.get(PENDING_LINK_KEY), dict):
        return refused(request, "No LMS link is waiting for a problem; start from the LMS.")
    course_id = request.session[PENDING_LINK_KEY].get("course_id")
    listed = _problems(session, int(course_id) if course_id is not None else None)
    return page(request, "lti_link.html", user, problems=listed)


@router.post("/lti/link")
def link_chosen(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    problem: Annotated[str, Form(max_length=100)],
) -> Response:
    pending = request.session.pop(PENDING_LINK_KEY, None)
    if not isinstance(pending, dict):
        return refused(request, "No LMS link is waiting for a problem; start from the LMS.")
    course = session.get(Course, int(pending["course_id"]))
    if course is None or not _is_instructor(session, course, user):
        return refused(request, "Only the course's instructors set up its links.", 403)
    try:
        link = provisioning.resource_link(
            session=session,
            course=course,
            resource_link_id=str(pending["resource_link_id"]),
            chosen=problem,
            lineitem_url=str(pending["lineitem_url"]) if pending.get("lineitem_url") else None,
        )
    except LaunchError as error:
        return refused(request, str(error))
    assert link is not None
    return RedirectResponse(f"/problems/{link.problem}", status_code=status.HTTP_303_SEE_OTHER)


def _is_instructor(session: Session, course: Course, user: User) -> bool:
    return courses.membership(session=session, course=course, user=user) == MemberRole.INSTRUCTOR
