"""Queueing mail: a row of the mail outbox (``MailMessage``), written in the caller's
transaction, so a mail exists exactly when what caused it was committed. Nothing is
sent here: app/mail/delivery.py sends due rows outside any request or transaction.

Only an address the account may be written to is used: a verified one, or one given
by the identity provider (``mail_address``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.core import mail_templates
from app.models import MailMessage, User
from app.vocabulary import IdSource, MailKind

USABLE_SOURCES = frozenset({IdSource.VERIFIED, IdSource.SSO})


def mail_address(user: User) -> str | None:
    """Where ``user`` may be mailed: their email once verified or given by SSO, else none."""
    if user.email and user.email_source in USABLE_SOURCES:
        return user.email
    return None


def queue(
    *,
    session: Session,
    kind: MailKind,
    to_address: str,
    template: str,
    user: User | None = None,
    **context: Any,
) -> MailMessage:
    """Queue the mail ``templates/mail/<template>.{txt,html}`` rendered with ``context``
    (and ``user``) to ``to_address``, in the caller's transaction."""
    rendered = mail_templates.render(template, user=user, **context)
    message = MailMessage(
        user_id=user.id if user is not None else None,
        kind=kind,
        to_address=to_address,
        subject=rendered.subject,
        text_body=rendered.text,
        html_body=rendered.html,
    )
    session.add(message)
    session.flush()
    return message
