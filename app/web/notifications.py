"""Notification switches: the account page's form, and the unsubscribe link every
notification mail carries (app/data/notifications.py), which works without signing in:
GET shows what it turns off and a button, POST turns it off. The signed token is what
authorizes it, so POST needs no CSRF token: a mail client's one-click unsubscribe
(RFC 8058) posts without a cookie."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.request_db import SessionDep
from app.data import notifications
from app.errors import InvalidInputError
from app.vocabulary import NotificationKind
from app.web.guards import CsrfChecked, PageUser, SignedInUser
from app.web.render import page

router = APIRouter(include_in_schema=False)


@router.post("/account/notifications")
def set_switches(
    session: SessionDep,
    user: SignedInUser,
    _csrf: CsrfChecked,
    on: Annotated[list[str] | None, Form()] = None,
) -> Response:
    chosen = set(on or [])
    unknown = chosen - {str(kind) for kind in NotificationKind}
    if unknown:
        raise InvalidInputError(f"There is no notification called {sorted(unknown)[0][:20]!r}.")
    notifications.set_switches(
        session=session, user=user, on=[NotificationKind(kind) for kind in chosen]
    )
    return RedirectResponse("/account#notifications", status_code=303)


@router.get("/notifications/unsubscribe/{token}", response_class=HTMLResponse)
def unsubscribe_page(token: str, request: Request, session: SessionDep, user: PageUser) -> Response:
    try:
        owner, kind = notifications.read_token(session=session, token=token)
    except InvalidInputError as error:
        return page(request, "unsubscribe.html", user, 400, error=str(error))
    return page(
        request,
        "unsubscribe.html",
        user,
        owner=owner,
        description=notifications.DESCRIPTIONS[kind],
        is_on=notifications.is_on(owner, kind),
        token=token,
    )


@router.post("/notifications/unsubscribe/{token}", response_class=HTMLResponse)
def unsubscribe(token: str, request: Request, session: SessionDep, user: PageUser) -> Response:
    try:
        owner, kind = notifications.unsubscribe(session=session, token=token)
    except InvalidInputError as error:
        return page(request, "unsubscribe.html", user, 400, error=str(error))
    return page(
        request,
        "unsubscribe.html",
        user,
        owner=owner,
        description=notifications.DESCRIPTIONS[kind],
        done=True,
    )
