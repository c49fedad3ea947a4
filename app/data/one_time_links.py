"""Single-use links (a password reset, an email verification): a random token that the
link carries and of which only a SHA-256 is stored, so a copy of the database opens
nothing. A link works once, before it expires; issuing a new one of a purpose voids
the account's older unused ones of that purpose."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.models import OneTimeLink, User, utcnow
from app.vocabulary import OneTimeLinkPurpose

LIFETIMES = {
    OneTimeLinkPurpose.RESET_PASSWORD: timedelta(minutes=30),
    OneTimeLinkPurpose.VERIFY_EMAIL: timedelta(days=2),
}
TOKEN_LIMIT = 100  # a longer token in a URL is no token of ours


class LinkProblem(StrEnum):
    """Why a link does not work, as the page says it."""

    UNKNOWN = "This link is not valid: it may be mistyped, or a newer one replaced it."
    USED = "This link was already used; each link works once."
    EXPIRED = "This link has expired; ask for a new one."


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(*, session: Session, user: User, purpose: OneTimeLinkPurpose, email: str = "") -> str:
    """A new link's token for ``user`` (older unused links of ``purpose`` stop working)."""
    now = utcnow()
    session.execute(
        update(OneTimeLink)
        .where(
            OneTimeLink.user_id == user.id,
            OneTimeLink.purpose == purpose,
            OneTimeLink.used_at.is_(None),
            OneTimeLink.expires_at > now,
        )
        .values(expires_at=now)
    )
    token = secrets.token_urlsafe(32)
    session.add(
        OneTimeLink(
            user_id=user.id,
            purpose=purpose,
            token_hash=_hash(token),
            email=email,
            created_at=now,
            expires_at=now + LIFETIMES[purpose],
        )
    )
    session.flush()
    return token


def find(*, session: Session, token: str, purpose: OneTimeLinkPurpose) -> OneTimeLink | LinkProblem:
    """The live link ``token`` opens, or why there is none."""
    if not token or len(token) > TOKEN_LIMIT:
        return LinkProblem.UNKNOWN
    link = session.scalar(
        select(OneTimeLink).where(
            OneTimeLink.token_hash == _hash(token), OneTimeLink.purpose == purpose
        )
    )
    if link is None:
        return LinkProblem.UNKNOWN
    if link.used_at is not None:
        return LinkProblem.USED
    if link.expires_at <= utcnow():
        return LinkProblem.EXPIRED
    return link


def use(*, session: Session, link: OneTimeLink) -> bool:
    """Mark ``link`` used; False when another request used it first (the caller then
    changes nothing)."""
    used = session.execute(
        update(OneTimeLink)
        .where(OneTimeLink.id == link.id, OneTimeLink.used_at.is_(None))
        .values(used_at=utcnow())
    )
    return bool(getattr(used, "rowcount", 0))
