"""Server-side browser sessions: a row per signed-in browser, found by the hash of a
random id that the (signed, HttpOnly) cookie carries.

Any server instance or worker checks the same table, so signing out, changing
the password or disabling the account ends a session everywhere at once; a
copied cookie stops working with it. Sessions last ``SESSION_DAYS`` at most.
``last_seen_at`` is noted in memory and written in the background
(app/data/usage.py), so reading pages never takes the database's write lock.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from app.data import usage
from app.models import User, WebSession, utcnow

SESSION_DAYS = 14


def _hash(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def start(*, session: Session, user: User, user_agent: str = "") -> str:
    """A new session for ``user``; returns the id to put in the cookie."""
    sid = secrets.token_urlsafe(32)
    now = utcnow()
    session.add(
        WebSession(
            user_id=user.id,
            token_hash=_hash(sid),
            created_at=now,
            last_seen_at=now,
            expires_at=now + timedelta(days=SESSION_DAYS),
            user_agent=user_agent[:200],
        )
    )
    session.flush()
    return sid


# Built once, one query: every page a signed-in person opens asks it.
_LIVE_SESSION = (
    select(WebSession, User)
    .join(User, User.id == WebSession.user_id)
    .where(WebSession.token_hash == bindparam("digest"))
)


def find(*, session: Session, sid: object) -> tuple[User, WebSession] | None:
    """The live session ``sid`` names and its (enabled) user."""
    if not isinstance(sid, str) or not sid:
        return None
    found = session.execute(_LIVE_SESSION, {"digest": _hash(sid)}).first()
    if found is None:
        return None
    row, user = found
    if row.expires_at <= utcnow() or user.disabled_at is not None:
        return None
    usage.session_seen(row.id)
    return user, row


def end(*, session: Session, sid: object) -> None:
    if isinstance(sid, str) and sid:
        session.execute(delete(WebSession).where(WebSession.token_hash == _hash(sid)))


def end_one(*, session: Session, user: User, session_id: int) -> bool:
    ended = session.execute(
        delete(WebSession).where(WebSession.id == session_id, WebSession.user_id == user.id)
    )
    return bool(getattr(ended, "rowcount", 0))


def of_user(*, session: Session, user: User) -> list[WebSession]:
    return list(
        session.scalars(
            select(WebSession)
            .where(WebSession.user_id == user.id, WebSession.expires_at > utcnow())
            .order_by(WebSession.last_seen_at.desc())
        )
    )
