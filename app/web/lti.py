"""The LTI 1.3 pages (app/lti/ does the work; docs/lti.md says what an LMS admin enters).

``/lti/login`` (GET or POST) starts the OIDC login; ``/lti/launch`` receives the
id_token, signs the learner in and lands them on the linked problem (an instructor
picks one for a new link; a deep-linking request goes to the picker: both in
app/web/lti_pickers.py); ``/lti/jwks`` publishes the tool's keys; ``/lti/register``
is Dynamic Registration. Every refusal is a page that says why (app/web/lti_answers.py).

The login's state is bound to the browser by a cookie (over TLS: SameSite=None,
Secure and Partitioned, so that Chrome and Firefox keep it in the LMS's frame under
the LMS's site; HttpOnly, ten minutes, one per login). A browser that keeps even
partitioned cookies out of frames does not send it back: the launch page then
offers to open jaxjudge in a window of its own, which starts the same login again
there (the first-party new-window fallback; docs/lti.md says why not postMessage
storage).

Framing: the launch's answer pages (a refusal, the new-window offer) and Dynamic
Registration (which the LMS opens in its own dialog) may be framed by any site:
they hold links, and a form whose authority is the admin's invitation it carries
(no session, so no CSRF token to lose in a frame). Every other page, the pickers
included, may be framed only by JAXJUDGE_LMS_FRAME_ORIGINS.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Form, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.core import throttle
from app.core.body_limits_and_headers import partition
from app.core.config import settings
from app.core.db import session_scope
from app.core.request_db import SessionDep
from app.core.throttle import client_address
from app.lti import deep_linking, keys, launch, provisioning, registration, roster
from app.lti.claims import DEEP_LINKING_REQUEST, Launch
from app.lti.http import PlatformCallError
from app.lti.launch import BrowserNotBoundError, LaunchError
from app.models import Course, User
from app.vocabulary import MemberRole
from app.web import lti_pickers
from app.web.auth import start_session
from app.web.lti_answers import base_url, frameable, is_secure, refused
from app.web.render import page

router = APIRouter(include_in_schema=False)
log = logging.getLogger("jaxjudge.lti")

_AT_ONCE = (
    "Another launch was setting up the same account, course or link at that moment;"
    " open the activity again."
)


async def _params(request: Request) -> dict[str, str]:
    if request.method == "POST":
        form = await request.form()
        source = {k: v for k, v in form.items() if isinstance(v, str)}
    else:
        source = dict(request.query_params)
    return {k: v[:2000] for k, v in source.items()}


@router.api_route("/lti/login", methods=["GET", "POST"])
async def login(request: Request, session: SessionDep) -> Response:
    address = client_address(request)
    if wait := throttle.lti_logins.wait_seconds(address):
        return refused(request, f"Too many LMS launches from here; try again in {wait} s.", 429)
    throttle.lti_logins.record(address)
    params = await _params(request)
    try:
        started = launch.start_login(
            session=session, params=params, redirect_uri=f"{base_url(request)}/lti/launch"
        )
    except LaunchError as error:
        session.rollback()
        return refused(request, str(error))
    response = RedirectResponse(started.redirect_url, status_code=status.HTTP_302_FOUND)
    _state_cookie(request, response, started.state, started.browser_secret)
    return response


def _sync_roster_quietly(course_id: int) -> None:
    """After a staff launch's answer is sent (a background task): the roster, best
    effort; a failure is logged and the next staff launch tries again."""
    with session_scope() as session:
        course = session.get(Course, course_id)
        context = provisioning.context_of(session=session, course=course) if course else None
        if course is None or context is None or not context.memberships_url:
            return
        try:
            roster.sync(session, course=course, context=context)
        except (PlatformCallError, LaunchError) as error:
            session.rollback()
            log.warning("roster of course %s not synced at launch: %s", course_id, error)


@router.post("/lti/launch")
def launch_page(
    request: Request,
    session: SessionDep,
    background: BackgroundTasks,
    # Bounded by hand, not by Form(max_length=...): too long is a page, not a 422.
    id_token: Annotated[str, Form()] = "",
    state: Annotated[str, Form()] = "",
) -> Response:
    if len(id_token) > launch.MAX_TOKEN_BYTES or len(state) > 200:
        return refused(request, "The launch's id_token or state is too long.")
    if request.headers.get("sec-fetch-dest") == "iframe" and not settings.frame_origins:
        # Framing is not configured: pages would be refused in the frame (and the
        # session cookie would not come back), so the learner continues in a window,
        # with a login of its own; this one is left unspent.
        return _new_window(request, session, state, "jaxjudge opens in a window of its own.")
    cookie = request.cookies.get(launch.state_cookie_name(state)) if state else None
    try:
        validated = launch.finish_login(
            session=session, id_token=id_token, state=state, browser_secret=cookie
        )
    except BrowserNotBoundError as error:
        session.rollback()
        return _new_window(request, session, state, str(error))
    except LaunchError as error:
        session.rollback()
        return _forget_state(request, refused(request, str(error)), state)
    session.commit()  # the login is spent whatever follows: a replay finds it used
    try:
        user = provisioning.account(session=session, launch=validated)
        course = provisioning.course(session=session, launch=validated, user=user)
    except LaunchError as error:
        session.rollback()
        return _forget_state(request, refused(request, str(error)), state)
    except IntegrityError:  # a second launch made the same account or course at once
        session.rollback()
        return _forget_state(request, refused(request, _AT_ONCE, 409), state)
    start_session(request, session, user)
    if validated.role is MemberRole.INSTRUCTOR:
        background.add_task(_sync_roster_quietly, course.id)
    else:  # the LMS's latest word: no deep-linking request of theirs is answered now
        deep_linking.withdraw(session=session, user=user, course=course)
    return _forget_state(request, _landing(request, session, validated, course, user), state)


def _landing(
    request: Request, session: Session, validated: Launch, course: Course, user: User
) -> Response:
    """Where a signed-in launch goes: the deep-linking picker, the link's problem, or
    (a new link, for its instructor) the page that picks one."""
    if validated.message_type == DEEP_LINKING_REQUEST:
        return lti_pickers.start_deep_linking(request, session, validated, course, user)
    staff = validated.role is MemberRole.INSTRUCTOR
    try:
        link = (
            provisioning.resource_link(
                session=session,
                course=course,
                resource_link_id=validated.resource_link_id,
                named=validated.custom.get(provisioning.CUSTOM_PROBLEM),
                lineitem_url=validated.services.lineitem_url,
                # The course's due date follows its staff's launches: a learner's LMS
                # may fill in their own (an extension), which is not the course's.
                due_at=validated.custom.get(provisioning.CUSTOM_DUE) if staff else None,
                points=validated.custom.get(provisioning.CUSTOM_POINTS),
            )
            if validated.resource_link_id
            else None
        )
    except LaunchError as error:
        return refused(request, str(error))  # signed in all the same: the LMS vouched
    except IntegrityError:
        session.rollback()
        return refused(request, _AT_ONCE, 409)
    if link is not None:
        return RedirectResponse(f"/problems/{link.problem}", status_code=status.HTTP_303_SEE_OTHER)
    if not staff:
        return refused(
            request, "This LMS link does not point to a problem yet; your instructor sets it up."
        )
    request.session[lti_pickers.PENDING_LINK_KEY] = lti_pickers.pending_link(validated, course)
    return RedirectResponse("/lti/link", status_code=status.HTTP_303_SEE_OTHER)


def _state_cookie(request: Request, response: Response, state: str, secret: str) -> None:
    """The login's cookie: HttpOnly, for /lti/ only, ten minutes. Over TLS it must cross
    sites (the LMS posts the launch), so SameSite=None and Secure, and Partitioned, so
    that Chrome and Firefox keep it in the LMS's frame; Max-Age=0 deletes it."""
    response.set_cookie(
        launch.state_cookie_name(state),
        secret,
        max_age=launch.LOGIN_MINUTES * 60 if secret else 0,
        path="/lti/",
        httponly=True,
        secure=is_secure(request),
        samesite="none" if is_secure(request) else "lax",
    )
    if is_secure(request):
        raw = response.raw_headers
        raw[-1] = (raw[-1][0], partition(raw[-1][1]))


def _forget_state(request: Request, response: Response, state: str) -> Response:
    """A finished login's cookie is dropped: they would pile up in the browser (the
    deletion carries the cookie's own attributes, or a frame's browser ignores it)."""
    if state:
        _state_cookie(request, response, state, "")
    return response


def _new_window(request: Request, session: Session, state: str, why: str) -> Response:
    login = launch.login_in_flight(session=session, state=state)
    relaunch = f"/lti/login?{login.relaunch_query}" if login and login.relaunch_query else None
    return refused(request, why, 401 if relaunch is None else 200, relaunch=relaunch)


@router.get("/lti/jwks")
def jwks() -> Response:
    return JSONResponse(keys.public_jwks(), headers={"Cache-Control": "max-age=300"})


@router.get("/lti/canvas.json")
def canvas_json(request: Request) -> Response:
    """Canvas's LTI 1.3 JSON configuration (docs/lti.md, "Canvas"): public, as the values
    a Canvas admin would type in are; made from the public URL (JAXJUDGE_PUBLIC_URL)."""
    return JSONResponse(
        registration.canvas_configuration(base_url(request)),
        headers={"Cache-Control": "max-age=300"},
    )


@router.get("/lti/register", response_class=HTMLResponse)
def registration_form(
    request: Request,
    session: SessionDep,
    invitation: str = "",
    openid_configuration: str = "",
    registration_token: str = "",
) -> Response:
    """The confirmation page, with the LMS's configuration: read once per invitation
    (app/lti/registration.py), and shown again from what was read."""
    try:
        invitation_id = registration.check_invitation(session, invitation)
        found = {"invitation_id": invitation_id, "url": openid_configuration}
        configuration = registration.stored_configuration(session, **found)
        if configuration is None:
            registration.spend_reading(session, **found)
            session.commit()  # the invitation's one read is spent before it is made
            configuration = registration.read_configuration(session, **found)
    except registration.RegistrationError as error:
        session.rollback()
        return refused(request, str(error))
    except IntegrityError:  # the same link opened twice at once
        session.rollback()
        return refused(request, registration.USED)
    response = page(
        request,
        "lti_register.html",
        None,
        configuration=configuration,
        invitation=invitation,
        openid_configuration=openid_configuration,
        registration_token=registration_token,
        tool=base_url(request),
    )
    frameable(response)
    return response


@router.post("/lti/register", response_class=HTMLResponse)
def registration_done(
    request: Request,
    session: SessionDep,
    invitation: Annotated[str, Form(max_length=1000)],
    openid_configuration: Annotated[str, Form(max_length=1000)],
    registration_token: Annotated[str, Form(max_length=4000)] = "",
) -> Response:
    try:
        invitation_id = registration.check_invitation(session, invitation)
        configuration = registration.spend_registering(
            session, invitation_id=invitation_id, url=openid_configuration
        )
        session.commit()  # the invitation's one registration call is spent before it is made
        platform = registration.register(
            session,
            configuration=configuration,
            token=registration_token or None,
            base_url=base_url(request),
            invitation_id=invitation_id,
        )
        session.flush()
    except registration.RegistrationError as error:
        session.rollback()
        return refused(request, str(error))
    except IntegrityError:  # the same link confirmed twice at once
        session.rollback()
        return refused(request, registration.USED)
    response = page(request, "lti_registered.html", None, platform=platform)
    frameable(response)
    return response
