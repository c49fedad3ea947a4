"""Sending the mail outbox (app/data/mail.py queues it), never inside a request or a
database transaction.

A due row is claimed by pushing its next attempt ``CLAIM_SECONDS`` ahead and
committing (two servers never send it at once); it is then sent with no transaction
open, and the outcome recorded in a second one. A failure waits ``backoff(attempts)``
and is retried, across restarts, up to ``MAX_ATTEMPTS``; a permanent refusal (an SMTP
5xx reply, an unusable address) ends it at once. Either way the row is ``failed``
with the reason, for an admin to see at /admin/mail and resend. A server that dies
after sending and before recording sends that mail again after the claim runs out:
once too often rather than never.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.core.periodic import Periodic
from app.mail import transport
from app.models import MailMessage, utcnow
from app.vocabulary import OutboxStatus

log = logging.getLogger("jaxjudge.mail")

CLAIM_SECONDS = 300
MAX_ATTEMPTS = 8
BATCH = 50
MAX_BATCHES = 20
INTERVAL = 5.0  # seconds between the deliverer's rounds


def backoff(attempts: int) -> timedelta:
    """A minute after the first failure, doubling, at most six hours (eight tries span
    about two hours)."""
    delay: timedelta = timedelta(minutes=1) * 2 ** max(0, attempts - 1)
    return min(timedelta(hours=6), delay)


def _due_ids(session: Session, now: datetime) -> list[int]:
    return list(
        session.scalars(
            select(MailMessage.id)
            .where(MailMessage.status == OutboxStatus.PENDING, MailMessage.next_attempt_at <= now)
            .order_by(MailMessage.next_attempt_at, MailMessage.id)
            .limit(BATCH)
        )
    )


def _claim(row_id: int) -> transport.Outgoing | None:
    """Take a due row for ``CLAIM_SECONDS``, committed at once; None: another has it."""
    now = utcnow()
    with session_scope() as session:
        claimed = session.execute(
            update(MailMessage)
            .where(
                MailMessage.id == row_id,
                MailMessage.status == OutboxStatus.PENDING,
                MailMessage.next_attempt_at <= now,
            )
            .values(next_attempt_at=now + timedelta(seconds=CLAIM_SECONDS))
        )
        if getattr(claimed, "rowcount", 0) != 1:
            return None
        row = session.get(MailMessage, row_id)
        assert row is not None
        return transport.Outgoing(
            id=row.id,
            to_address=row.to_address,
            subject=row.subject,
            text_body=row.text_body,
            html_body=row.html_body,
        )


def _record_failure(row_id: int, error: transport.MailNotSentError) -> OutboxStatus:
    with session_scope() as session:
        row = session.get(MailMessage, row_id)
        if row is None:
            return OutboxStatus.FAILED
        row.attempts += 1
        row.last_error = str(error)[:2000]
        if error.permanent or row.attempts >= MAX_ATTEMPTS:
            row.status = OutboxStatus.FAILED
        else:
            row.next_attempt_at = utcnow() + backoff(row.attempts)
        status = OutboxStatus(row.status)
    log.warning("mail %s not sent: %s", row_id, error)
    return status


def deliver_one(row_id: int) -> OutboxStatus | None:
    """Claim and send one row; returns its new status (None: another server has it)."""
    mail = _claim(row_id)
    if mail is None:
        return None
    try:
        transport.send(mail)
    except transport.MailNotSentError as error:
        return _record_failure(row_id, error)
    except Exception as error:  # a bug is this row's failure, not the deliverer's end
        log.exception("mail %s: unexpected error", row_id)
        return _record_failure(row_id, transport.MailNotSentError(f"internal error: {error!r}"))
    with session_scope() as session:
        session.execute(
            update(MailMessage)
            .where(MailMessage.id == row_id)
            .values(
                status=OutboxStatus.SENT, attempts=MailMessage.attempts + 1, last_error=None,
                sent_at=utcnow(),
            )
        )  # fmt: skip
    return OutboxStatus.SENT


def deliver_due() -> int:
    """Send every due row (in batches of ``BATCH``); returns how many were sent."""
    sent = 0
    for _ in range(MAX_BATCHES):
        with session_scope() as session:
            due = _due_ids(session, utcnow())
        sent += sum(deliver_one(row_id) == OutboxStatus.SENT for row_id in due)
        if len(due) < BATCH:
            break
    return sent


def resend(*, session: Session, row_id: int) -> bool:
    """Make a failed row pending again now, with its tries counted afresh."""
    resent = session.execute(
        update(MailMessage)
        .where(MailMessage.id == row_id, MailMessage.status == OutboxStatus.FAILED)
        .values(status=OutboxStatus.PENDING, attempts=0, next_attempt_at=utcnow())
    )
    return bool(getattr(resent, "rowcount", 0))


def recent(*, session: Session, limit: int = 200) -> list[MailMessage]:
    return list(session.scalars(select(MailMessage).order_by(MailMessage.id.desc()).limit(limit)))


def deliverer(interval: float = INTERVAL) -> Periodic:
    """Sends due mail every ``interval`` seconds in a thread of the server."""
    return Periodic(name="mail-outbox", interval=interval, work=deliver_due, log=log)
