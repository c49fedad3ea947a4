"""The admin's view of the mail outbox: which transport is configured, the latest mails
with their status and last error, and a resend for a failed one."""

from __future__ import annotations

from fastapi import APIRouter, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.core.config import settings
from app.core.request_db import SessionDep
from app.errors import NotFoundError
from app.mail import delivery, transport
from app.web.guards import Admin, CsrfChecked
from app.web.render import page

router = APIRouter(include_in_schema=False)


@router.get("/admin/mail", response_class=HTMLResponse)
def outbox(request: Request, session: SessionDep, admin: Admin) -> Response:
    return page(
        request,
        "admin_mail.html",
        admin,
        transport=transport.describe(),
        smtp=bool(settings.smtp_url),
        mail_from=settings.mail_from,
        mails=delivery.recent(session=session),
        max_attempts=delivery.MAX_ATTEMPTS,
    )


@router.post("/admin/mail/{mail_id}/resend")
def resend(mail_id: int, session: SessionDep, admin: Admin, _csrf: CsrfChecked) -> Response:
    if not delivery.resend(session=session, row_id=mail_id):
        raise NotFoundError(f"No failed mail {mail_id}.")
    return RedirectResponse("/admin/mail", status_code=status.HTTP_303_SEE_OTHER)
