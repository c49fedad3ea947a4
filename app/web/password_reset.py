"""Forgotten passwords: a single-use link by mail (``/password/forgot``), or one an
admin makes for an account without an address (``/admin/reset-links``; the CLI's
``jaxjudge users reset-password``).

The answer to a request never says whether an account matched (the same page, the same
status, a mail rendered either way); requests are throttled per client address and per
account, silently. The token leaves the URL at once: ``/password/reset/{token}`` keeps it
in the (signed) session cookie and redirects to ``/password/reset``, so it is in no
later request line, and no page that held it sends a Referer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import func, select

from app.core import throttle
from app.core.config import settings
from app.core.request_db import SessionDep
from app.data import account_mail, accounts, one_time_links
from app.data.mail import USABLE_SOURCES
from app.errors import DomainError, NotFoundError
from app.models import OneTimeLink, User
from app.vocabulary import OneTimeLinkPurpose
from app.web.guards import Admin, CsrfChecked, PageUser
from app.web.render import page

router = APIRouter(include_in_schema=False)
SESSION_KEY = "reset_token"
MATCHES_MAILED = 5  # accounts sharing one verified address, each mailed at most
NO_REFERRER = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def base_url(request: Request) -> str:
    return (settings.public_url or str(request.base_url)).rstrip("/")


def _private(response: Response) -> Response:
    response.headers.update(NO_REFERRER)
    return response


def _matching(session: SessionDep, name_or_email: str) -> list[User]:
    wanted = name_or_email.strip()
    if "@" not in wanted:
        user = accounts.user_by_name(session=session, name=wanted) if wanted else None
        return [user] if user is not None else []
    return list(
        session.scalars(
            select(User)
            .where(func.lower(User.email) == wanted.lower(), User.email_source.in_(USABLE_SOURCES))
            .order_by(User.id)
            .limit(MATCHES_MAILED)
        )
    )


@router.get("/password/forgot", response_class=HTMLResponse)
def forgot_form(request: Request, user: PageUser) -> Response:
    return page(request, "password_forgot.html", user)


@router.post("/password/forgot", response_class=HTMLResponse)
def forgot(
    request: Request,
    session: SessionDep,
    _csrf: CsrfChecked,
    name_or_email: Annotated[str, Form(max_length=254)] = "",
) -> Response:
    address = throttle.client_address(request)
    mailed = False
    if not throttle.password_resets_by_address.wait_seconds(address):
        throttle.password_resets_by_address.record(address)
        for user in _matching(session, name_or_email):
            key = str(user.id)
            if throttle.password_resets_by_account.wait_seconds(key):
                continue
            throttle.password_resets_by_account.record(key)
            mailed |= account_mail.mail_reset_link(
                session=session, user=user, base_url=base_url(request)
            )
    if not mailed:
        account_mail.render_decoy(name_or_email)
    return page(request, "password_forgot.html", None, sent=True)


def _link_problem(request: Request, problem: one_time_links.LinkProblem) -> Response:
    code = 400 if problem is one_time_links.LinkProblem.UNKNOWN else 410
    return _private(page(request, "password_reset.html", None, code, problem=problem.value))


@router.get("/password/reset/{token}")
def reset_link(request: Request, token: str) -> Response:
    request.session[SESSION_KEY] = token[: one_time_links.TOKEN_LIMIT + 1]
    return _private(RedirectResponse("/password/reset", status_code=status.HTTP_303_SEE_OTHER))


def _current_link(
    request: Request, session: SessionDep
) -> OneTimeLink | one_time_links.LinkProblem:
    token = request.session.get(SESSION_KEY)
    return one_time_links.find(
        session=session,
        token=token if isinstance(token, str) else "",
        purpose=OneTimeLinkPurpose.RESET_PASSWORD,
    )


@router.get("/password/reset", response_class=HTMLResponse)
def reset_form(request: Request, session: SessionDep) -> Response:
    link = _current_link(request, session)
    if isinstance(link, one_time_links.LinkProblem):
        return _link_problem(request, link)
    account = session.get(User, link.user_id)
    return _private(page(request, "password_reset.html", None, account=account))


@router.post("/password/reset", response_class=HTMLResponse)
def reset(
    request: Request,
    session: SessionDep,
    _csrf: CsrfChecked,
    password: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    link = _current_link(request, session)
    if isinstance(link, one_time_links.LinkProblem):
        return _link_problem(request, link)
    account = session.get(User, link.user_id)
    if account is None or account.disabled_at is not None:
        return _link_problem(request, one_time_links.LinkProblem.UNKNOWN)
    try:
        ended = accounts.reset_password(session=session, user=account, new=password)
    except DomainError as error:
        return _private(
            page(request, "password_reset.html", None, 400, account=account, error=str(error))
        )
    if not one_time_links.use(session=session, link=link):  # used meanwhile by another tab
        session.rollback()
        return _link_problem(request, one_time_links.LinkProblem.USED)
    request.session.clear()  # the reset ended this browser's session too, if it had one
    return _private(page(request, "password_reset.html", None, done=True, ended=ended))


@router.post("/admin/reset-links", response_class=HTMLResponse)
def admin_reset_link(
    request: Request,
    session: SessionDep,
    admin: Admin,
    _csrf: CsrfChecked,
    user_id: Annotated[int, Form()],
) -> Response:
    target = session.get(User, user_id)
    if target is None:
        raise NotFoundError(f"No user {user_id}.")
    link = account_mail.reset_link(session=session, user=target, base_url=base_url(request))
    minutes = int(one_time_links.LIFETIMES[OneTimeLinkPurpose.RESET_PASSWORD].total_seconds() // 60)
    return _private(
        page(request, "admin_reset_link.html", admin, target=target, link=link, minutes=minutes)
    )
