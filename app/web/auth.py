"""Signing up, in and out. After signing in the browser goes back to the page that
asked for it (``next=``), if that is a path on this site."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.core import throttle
from app.core.config import settings
from app.core.request_db import SessionDep
from app.core.throttle import client_address
from app.data import accounts, web_sessions
from app.errors import DomainError, InvalidInputError
from app.models import User
from app.vocabulary import Role
from app.web import email_verification
from app.web.guards import CsrfChecked, PageUser
from app.web.render import page

router = APIRouter(include_in_schema=False)
NextField = Annotated[str, Form(max_length=2000)]


def safe_next(target: str | None) -> str:
    """Where to go after signing in: a path on this site, never another site.

    "//evil.example" and "/\\evil.example" are other sites to a browser, and so is
    anything with a scheme; control characters could split the header."""
    if (
        not target
        or not target.startswith("/")
        or target.startswith(("//", "/\\"))
        or any(ord(char) < 0x20 or char == "\x7f" for char in target)
    ):
        return "/"
    return target


def sign_in_url(path_and_query: str) -> str:
    return f"/login?next={quote(path_and_query, safe='/')}"


def start_session(request: Request, session: Session, user: User) -> None:
    """Sign ``user`` in on this browser: a password, a sign-up or an LMS launch."""
    web_sessions.end(session=session, sid=request.session.get("sid"))
    request.session.clear()  # a new session (and CSRF token) on sign-in: no fixation
    request.session["sid"] = web_sessions.start(
        session=session, user=user, user_agent=request.headers.get("user-agent", "")
    )


def _sign_in(request: Request, session: SessionDep, user: User, target: str) -> RedirectResponse:
    start_session(request, session, user)
    return RedirectResponse(safe_next(target), status_code=status.HTTP_303_SEE_OTHER)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, user: PageUser, next: str = "/", password: str = "") -> Response:
    # With JAXJUDGE_PASSWORD_SIGN_IN=false the form is still here for administrators.
    return page(request, "login.html", user, next=safe_next(next), password_form=password == "1")


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    session: SessionDep,
    _csrf: CsrfChecked,
    name: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    next: NextField = "/",
) -> Response:
    address = client_address(request)

    def refused(code: int, message: str) -> Response:
        return page(
            request, "login.html", None, code, error=message, name=name, next=next,
            password_form=True,
        )  # fmt: skip

    if wait := throttle.failed_sign_ins.wait_seconds(address):
        return refused(429, f"Too many failed sign-ins from here. Try again in {wait} s.")
    outcome = accounts.authenticate(session=session, name=name, password=password)
    if outcome.wait_seconds:
        return refused(
            429, f"Too many failed sign-ins for this name. Try again in {outcome.wait_seconds} s."
        )
    if not settings.password_sign_in and (outcome.user is None or outcome.user.role != Role.ADMIN):
        throttle.failed_sign_ins.record(address)  # one answer: no oracle for others' passwords
        return refused(
            403,
            "Wrong name or password, or not an administrator: here a password signs in"
            " administrators only; everyone else uses a sign-in button.",
        )
    if outcome.disabled:
        return refused(403, "This account is disabled; ask an administrator.")
    if outcome.user is None:
        throttle.failed_sign_ins.record(address)
        return refused(400, "Wrong name or password.")
    return _sign_in(request, session, outcome.user, next)


def _sign_up_closed(request: Request, user: User | None) -> Response:
    message = (
        "Accounts here come from single sign-on: use a sign-in button on the sign-in page;"
        " your first sign-in makes your account."
    )
    return page(request, "error.html", user, 403, title="Sign-up is closed", message=message)


@router.get("/signup", response_class=HTMLResponse)
def signup_form(request: Request, user: PageUser, next: str = "/") -> Response:
    if not settings.password_sign_in:
        return _sign_up_closed(request, user)
    return page(
        request,
        "signup.html",
        user,
        next=safe_next(next),
        require_email=settings.require_verified_email,
    )


@router.post("/signup", response_class=HTMLResponse)
def signup(
    request: Request,
    session: SessionDep,
    _csrf: CsrfChecked,
    # Empty fields reach the account rules, which say what a name or password needs.
    name: Annotated[str, Form(max_length=200)] = "",
    password: Annotated[str, Form(max_length=1000)] = "",
    email: Annotated[str, Form(max_length=254)] = "",
    next: NextField = "/",
) -> Response:
    if not settings.password_sign_in:
        return _sign_up_closed(request, None)
    address = client_address(request)
    if wait := throttle.sign_ups.wait_seconds(address):
        message = f"Too many new accounts from here. Try again in {wait // 60 + 1} minute(s)."
        return page(
            request, "signup.html", None, 429, error=message, name=name, next=next,
            email=email, require_email=settings.require_verified_email,
        )  # fmt: skip
    try:
        if settings.require_verified_email and not email.strip():
            raise InvalidInputError("Give your email address: a link sent to it opens submitting.")
        user = accounts.create_user(session=session, name=name, password=password)
        if settings.require_verified_email:
            accounts.set_profile(
                session=session, user=user, display_name="", email=email, student_id=""
            )
    except DomainError as error:
        session.rollback()
        return page(
            request, "signup.html", None, 400, error=str(error), name=name, next=next,
            email=email, require_email=settings.require_verified_email,
        )  # fmt: skip
    throttle.sign_ups.record(address)
    if settings.require_verified_email:
        email_verification.send_link(request, session, user)
    return _sign_in(request, session, user, next)


@router.post("/logout")
def logout(request: Request, session: SessionDep, _csrf: CsrfChecked) -> Response:
    web_sessions.end(session=session, sid=request.session.get("sid"))  # a copied cookie dies too
    request.session.clear()
    return RedirectResponse("/login", status_code=status.HTTP_303_SEE_OTHER)
