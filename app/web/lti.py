"""The LTI 1.3 pages (app/lti/ does the work; docs/lti.md says what an LMS admin enters).

``/lti/login`` (GET or POST) starts the OIDC login; ``/lti/launch`` receives the
id_token, signs the learner in and lands them on the linked problem (an instructor
picks one for a new link; a deep-linking request goes to the picker);
``/lti/jwks`` publishes the tool's keys; ``/lti/register`` is Dynamic
Registration. Every refusal is a page that says why and changes nothing.

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
from urllib.parse import urlparse

from fastapi import APIRouter, BackgroundTasks, Form, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.api.deps import SessionDep
from app.core.config import settings
from app.core.db import session_scope
from app.core.http_guards import partition, security_headers
from app.data import catalog, courses, web_sessions
from app.errors import DomainError
from app.lti import deep_linking, keys, launch, provisioning, registration, roster
from app.lti.claims import DEEP_LINKING_REQUEST, DeepLinkingSettings, Launch
from app.lti.http import PlatformCallError
from app.lti.launch import BrowserNotBoundError, LaunchError
from app.models import Course, LtiPlatform, User
from app.vocabulary import MemberRole
from app.web.guards import CsrfChecked, SignedInUser
from app.web.render import page

router = APIRouter(include_in_schema=False)
log = logging.getLogger("jaxjudge.lti")

# Pages a launch answers with may be shown in the LMS's frame; they hold no action
# but links and forms back to jaxjudge.
FRAMEABLE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self'"
    " data:; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors *"
)
DEEP_LINK_KEY = "lti_deep_link"
_AT_ONCE = (
    "Another launch was setting up the same account, course or link at that moment;"
    " open the activity again."
)
PENDING_LINK_KEY = "lti_pending_link"


def base_url(request: Request) -> str:
    return (settings.public_url or str(request.base_url)).rstrip("/")


def _is_secure(request: Request) -> bool:
    return settings.secure_cookies or request.url.scheme == "https"


def _refused(request: Request, message: str, code: int = 400, **context: object) -> Response:
    response = page(request, "lti_error.html", None, code, message=message, **context)
    _frameable(response)
    return response


def _frameable(response: Response) -> None:
    response.headers["content-security-policy"] = FRAMEABLE_POLICY
    response.headers["x-frame-options"] = "ALLOWALL"


async def _params(request: Request) -> dict[str, str]:
    if request.method == "POST":
        form = await request.form()
        source = {k: v for k, v in form.items() if isinstance(v, str)}
    else:
        source = dict(request.query_params)
    return {k: v[:2000] for k, v in source.items()}


@router.api_route("/lti/login", methods=["GET", "POST"])
async def login(request: Request, session: SessionDep) -> Response:
    params = await _params(request)
    try:
        started = launch.start_login(
            session=session, params=params, redirect_uri=f"{base_url(request)}/lti/launch"
        )
    except LaunchError as error:
        session.rollback()
        return _refused(request, str(error))
    response = RedirectResponse(started.redirect_url, status_code=status.HTTP_302_FOUND)
    _state_cookie(request, response, started.state, started.browser_secret)
    return response


def _sign_in(request: Request, session: Session, user: User) -> None:
    web_sessions.end(session=session, sid=request.session.get("sid"))
    request.session.clear()
    request.session["sid"] = web_sessions.start(
        session=session, user=user, user_agent=request.headers.get("user-agent", "")
    )


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
        return _refused(request, "The launch's id_token or state is too long.")
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
        return _forget_state(request, _refused(request, str(error)), state)
    session.commit()  # the login is spent whatever follows: a replay finds it used
    try:
        user = provisioning.account(session=session, launch=validated)
        course = provisioning.course(session=session, launch=validated, user=user)
    except LaunchError as error:
        session.rollback()
        return _forget_state(request, _refused(request, str(error)), state)
    except IntegrityError:  # a second launch made the same account or course at once
        session.rollback()
        return _forget_state(request, _refused(request, _AT_ONCE, 409), state)
    _sign_in(request, session, user)
    if validated.role is MemberRole.INSTRUCTOR:
        background.add_task(_sync_roster_quietly, course.id)
    return _forget_state(request, _landing(request, session, validated, course), state)


def _landing(request: Request, session: Session, validated: Launch, course: Course) -> Response:
    """Where a signed-in launch goes: the deep-linking picker, the link's problem, or
    (a new link, for its instructor) the page that picks one."""
    if validated.message_type == DEEP_LINKING_REQUEST:
        return _start_deep_linking(request, validated, course)
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
        return _refused(request, str(error))  # signed in all the same: the LMS vouched
    except IntegrityError:
        session.rollback()
        return _refused(request, _AT_ONCE, 409)
    if link is not None:
        return RedirectResponse(f"/problems/{link.problem}", status_code=status.HTTP_303_SEE_OTHER)
    if not staff:
        return _refused(
            request, "This LMS link does not point to a problem yet; your instructor sets it up."
        )
    request.session[PENDING_LINK_KEY] = _pending_link(validated, course)
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
        secure=_is_secure(request),
        samesite="none" if _is_secure(request) else "lax",
    )
    if _is_secure(request):
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
    return _refused(request, why, 401 if relaunch is None else 200, relaunch=relaunch)


def _pending_link(validated: Launch, course: Course) -> dict[str, object]:
    return {
        "course_id": course.id,
        "resource_link_id": validated.resource_link_id,
        "lineitem_url": validated.services.lineitem_url,
    }


def _start_deep_linking(request: Request, validated: Launch, course: Course) -> Response:
    if validated.role is not MemberRole.INSTRUCTOR or validated.deep_linking is None:
        return _refused(request, "Only the course's instructors add jaxjudge problems to it.", 403)
    settings_ = validated.deep_linking
    request.session[DEEP_LINK_KEY] = {
        "platform_id": validated.platform_id,
        "deployment_id": validated.deployment_id,
        "course_id": course.id,
        "return_url": settings_.return_url,
        "accept_multiple": settings_.accept_multiple,
        "data": settings_.data,
    }
    return RedirectResponse("/lti/deep-link", status_code=status.HTTP_303_SEE_OTHER)


def _problems(session: Session) -> list[tuple[str, str, str]]:
    return [(p.slug, p.config.title, p.config.track) for _v, p in catalog.live_problems(session)]


@router.get("/lti/deep-link", response_class=HTMLResponse)
def deep_link_picker(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    pending = request.session.get(DEEP_LINK_KEY)
    if not isinstance(pending, dict):
        return _refused(request, "No LMS is waiting for problems; start from the LMS.")
    course = session.get(Course, int(pending["course_id"]))
    assigned = (
        {a.problem for a in courses.assignments_of(session=session, course=course)}
        if course
        else set()
    )
    # The course's existing assignments first: adding one again links the LMS to it.
    problems = sorted(_problems(session), key=lambda p: p[0] not in assigned)
    return page(
        request,
        "lti_deep_link.html",
        user,
        problems=problems,
        assigned=assigned,
        multiple=bool(pending.get("accept_multiple")),
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
    pending = request.session.pop(DEEP_LINK_KEY, None)
    if not isinstance(pending, dict):
        return _refused(request, "No LMS is waiting for problems; start from the LMS.")
    platform = session.get(LtiPlatform, int(pending["platform_id"]))
    titles = {slug: title for slug, title, _track in _problems(session)}
    picked = [slug for slug in (problem or []) if slug in titles]
    if platform is None or not picked:
        return _refused(request, "Pick at least one problem (start again from the LMS).")
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
        session,
        platform=platform,
        deployment_id=str(pending["deployment_id"]),
        settings=DeepLinkingSettings(
            return_url=str(pending["return_url"]),
            accept_multiple=bool(pending["accept_multiple"]),
            data=pending.get("data") if isinstance(pending.get("data"), str) else None,
        ),
        items=items,
    )
    return _post_to(request, user, str(pending["return_url"]), {"JWT": token})


def _post_to(request: Request, user: User, url: str, fields: dict[str, str]) -> Response:
    """A page whose script posts ``fields`` to ``url`` (another site: the CSP allows it)."""
    response = page(request, "lti_post.html", user, url=url, fields=fields)
    origin = "{0.scheme}://{0.netloc}".format(urlparse(url))
    policy = dict(security_headers(settings.frame_origins))[b"content-security-policy"].decode()
    response.headers["content-security-policy"] = policy.replace(
        "form-action 'self'", f"form-action 'self' {origin}"
    )
    return response


@router.get("/lti/link", response_class=HTMLResponse)
def link_picker(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    if not isinstance(request.session.get(PENDING_LINK_KEY), dict):
        return _refused(request, "No LMS link is waiting for a problem; start from the LMS.")
    return page(request, "lti_link.html", user, problems=_problems(session))


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
        return _refused(request, "No LMS link is waiting for a problem; start from the LMS.")
    course = session.get(Course, int(pending["course_id"]))
    if course is None or not _is_instructor(session, course, user):
        return _refused(request, "Only the course's instructors set up its links.", 403)
    try:
        link = provisioning.resource_link(
            session=session,
            course=course,
            resource_link_id=str(pending["resource_link_id"]),
            chosen=problem,
            lineitem_url=str(pending["lineitem_url"]) if pending.get("lineitem_url") else None,
        )
    except LaunchError as error:
        return _refused(request, str(error))
    assert link is not None
    return RedirectResponse(f"/problems/{link.problem}", status_code=status.HTTP_303_SEE_OTHER)


def _is_instructor(session: Session, course: Course, user: User) -> bool:
    return courses.membership(session=session, course=course, user=user) == MemberRole.INSTRUCTOR


@router.get("/lti/jwks")
def jwks() -> Response:
    return JSONResponse(keys.public_jwks(), headers={"Cache-Control": "max-age=300"})


@router.get("/lti/register", response_class=HTMLResponse)
def registration_form(
    request: Request,
    session: SessionDep,
    invitation: str = "",
    openid_configuration: str = "",
    registration_token: str = "",
) -> Response:
    try:
        registration.check_invitation(session, invitation)
        configuration = registration.read_configuration(openid_configuration)
    except registration.RegistrationError as error:
        return _refused(request, str(error))
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
    _frameable(response)
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
        configuration = registration.read_configuration(openid_configuration)
        platform = registration.register(
            session,
            configuration=configuration,
            token=registration_token or None,
            base_url=base_url(request),
            invitation_id=invitation_id,
        )
        session.flush()
    except (registration.RegistrationError, DomainError) as error:
        session.rollback()
        return _refused(request, str(error))
    except IntegrityError:  # the same link confirmed twice at once
        session.rollback()
        return _refused(request, "This registration link was used already; ask for a new one.")
    response = page(request, "lti_registered.html", None, platform=platform)
    _frameable(response)
    return response
