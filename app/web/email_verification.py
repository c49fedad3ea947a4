"""Verifying an account's email: the link mailed to the address shows a Confirm button
(a GET changes nothing: mail scanners follow links), and the POST verifies the address,
only if it is still the account's. The account page sends a new link."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.core import throttle
from app.core.request_db import SessionDep
from app.data import account_mail, one_time_links
from app.models import OneTimeLink, User
from app.vocabulary import OneTimeLinkPurpose
from app.web.guards import CsrfChecked, PageUser
from app.web.password_reset import NO_REFERRER, base_url
from app.web.render import page

router = APIRouter(include_in_schema=False)
NOT_CURRENT = (
    "This link confirms an address that is no longer this account's email; "
    "the account page sends a link for the current one."
)


def _page(request: Request, user: User | None, code: int = 200, **context: object) -> Response:
    response = page(request, "email_verify.html", user, code, **context)
    response.headers.update(NO_REFERRER)
    return response


def _found(
    request: Request, session: SessionDep, token: str, user: User | None
) -> tuple[OneTimeLink, User] | Response:
    link = one_time_links.find(
        session=session, token=token, purpose=OneTimeLinkPurpose.VERIFY_EMAIL
    )
    if isinstance(link, one_time_links.LinkProblem):
        code = 400 if link is one_time_links.LinkProblem.UNKNOWN else 410
        return _page(request, user, code, problem=link.value)
    account = session.get(User, link.user_id)
    if account is None or account.email != link.email:
        return _page(request, user, 409, problem=NOT_CURRENT)
    return link, account


@router.get("/email/verify/{token}", response_class=HTMLResponse)
def confirm_form(request: Request, session: SessionDep, user: PageUser, token: str) -> Response:
    found = _found(request, session, token, user)
    if isinstance(found, Response):
        return found
    link, account = found
    return _page(request, user, account=account, address=link.email, token=token)


@router.post("/email/verify/{token}", response_class=HTMLResponse)
def confirm(
    request: Request, session: SessionDep, user: PageUser, _csrf: CsrfChecked, token: str
) -> Response:
    found = _found(request, session, token, user)
    if isinstance(found, Response):
        return found
    link, account = found
    if not account_mail.verify(session=session, user=account, link=link):
        return _page(request, user, 410, problem=one_time_links.LinkProblem.USED.value)
    return _page(request, user, done=True, account=account, address=link.email)


def send_link(request: Request, session: SessionDep, user: User) -> str:
    """Mail a verification link for ``user``'s email (throttled per account); returns
    what the account page says."""
    if not account_mail.needs_verification(user):
        return ""
    key = str(user.id)
    if wait := throttle.verification_mails_by_account.wait_seconds(key):
        return f"Too many confirmation mails; ask again in {wait // 60 + 1} minute(s)."
    throttle.verification_mails_by_account.record(key)
    account_mail.mail_verification(session=session, user=user, base_url=base_url(request))
    return f"A link to confirm {user.email} is on its way; the address is used once confirmed."
