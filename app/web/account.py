"""The signed-in user's account page (password, sessions, API tokens) and the admin's
user list (disable, enable)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.request_db import SessionDep
from app.data import accounts, api_tokens, external_identities, web_sessions
from app.errors import DomainError, InvalidInputError, NotFoundError
from app.models import User
from app.web import client_download, email_verification, notebook_example
from app.web.guards import Admin, CsrfChecked, SignedInUser
from app.web.render import page

router = APIRouter(include_in_schema=False)


def _account_page(
    request: Request, session: SessionDep, user: User, code: int = 200, **context: object
) -> Response:
    return page(
        request,
        "account.html",
        user,
        code,
        sessions=web_sessions.of_user(session=session, user=user),
        current_session=getattr(request.state, "web_session_id", None),
        tokens=api_tokens.of_user(session=session, user=user),
        identities=external_identities.identities_of(session=session, user=user),
        server=str(request.base_url).rstrip("/"),
        client_wheel=client_download.PATH,
        notebook_example=notebook_example,
        **context,
    )


def _back() -> RedirectResponse:
    return RedirectResponse("/account", status_code=status.HTTP_303_SEE_OTHER)


@router.get("/account", response_class=HTMLResponse)
def account(request: Request, session: SessionDep, user: SignedInUser) -> Response:
    return _account_page(request, session, user)


@router.post("/account/password", response_class=HTMLResponse)
def change_password(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    current: Annotated[str, Form(max_length=1000)],
    new: Annotated[str, Form(max_length=1000)],
) -> Response:
    try:
        ended = accounts.change_password(
            session=session,
            user=user,
            current=current,
            new=new,
            keep_session=getattr(request.state, "web_session_id", None),
        )
    except DomainError as error:
        return _account_page(request, session, user, 400, error=str(error))
    notice = f"Password changed; {ended} other session(s) signed out."
    return _account_page(request, session, user, notice=notice)


@router.post("/account/profile", response_class=HTMLResponse)
def update_profile(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    display_name: Annotated[str, Form(max_length=1000)] = "",
    email: Annotated[str, Form(max_length=1000)] = "",
    student_id: Annotated[str, Form(max_length=1000)] = "",
) -> Response:
    email_before = user.email
    try:
        accounts.set_profile(
            session=session,
            user=user,
            display_name=display_name,
            email=email,
            student_id=student_id,
        )
    except DomainError as error:
        return _account_page(request, session, user, 400, error=str(error))
    mailed = (
        email_verification.send_link(request, session, user) if user.email != email_before else ""
    )
    return _account_page(request, session, user, notice=" ".join(("Saved.", mailed)).strip())


@router.post("/account/email/verify", response_class=HTMLResponse)
def resend_verification(
    request: Request, session: SessionDep, user: SignedInUser, _csrf: CsrfChecked
) -> Response:
    notice = email_verification.send_link(request, session, user)
    return _account_page(request, session, user, notice=notice or "Your email needs no link.")


@router.post("/account/sessions/{session_id}/end")
def end_session(
    session_id: int, session: SessionDep, user: SignedInUser, _csrf: CsrfChecked
) -> Response:
    if not web_sessions.end_one(session=session, user=user, session_id=session_id):
        raise NotFoundError(f"No session {session_id} of yours.")
    return _back()


@router.post("/account/tokens", response_class=HTMLResponse)
def create_token(
    request: Request,
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    label: Annotated[str, Form(max_length=100)] = "",
    expires_days: Annotated[int | None, Form(ge=1, le=api_tokens.MAX_DAYS)] = None,
) -> Response:
    token, _row = api_tokens.create(
        session=session, user=user, name=label, expires_in_days=expires_days
    )
    return _account_page(request, session, user, 201, new_token=token)


@router.post("/account/tokens/{token_id}/revoke")
def revoke_token(
    token_id: int, session: SessionDep, user: SignedInUser, _csrf: CsrfChecked
) -> Response:
    if not api_tokens.revoke(session=session, user=user, token_id=token_id):
        raise NotFoundError(f"No token {token_id} of yours.")
    return _back()


@router.get("/admin/users", response_class=HTMLResponse)
def users(request: Request, session: SessionDep, admin: Admin) -> Response:
    return page(request, "admin_users.html", admin, users=accounts.all_users(session=session))


@router.post("/admin/users/{user_id}/{action}")
def set_disabled(
    user_id: int, action: str, session: SessionDep, admin: Admin, _csrf: CsrfChecked
) -> Response:
    target = session.get(User, user_id)
    if target is None or action not in ("disable", "enable"):
        raise NotFoundError("No such user or action.")
    if target.id == admin.id:
        raise InvalidInputError("You cannot disable your own account.")
    accounts.set_disabled(session=session, user=target, disabled=action == "disable")
    return RedirectResponse("/admin/users", status_code=status.HTTP_303_SEE_OTHER)
