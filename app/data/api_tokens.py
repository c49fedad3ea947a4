"""Personal API tokens: named, optionally expiring, listed and revoked by their owner.

A token is ``jj_`` and 43 random characters, shown once; only its SHA-256 is
stored. A token stops working when it is revoked (deleted), when it expires,
or while its owner is disabled. Its use is noted in memory and written in the
background (app/data/usage.py): authenticating a request writes nothing.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import bindparam, delete, select
from sqlalchemy.orm import Session

from app.core.security import new_token, token_hash
from app.data import usage
from app.errors import InvalidInputError
from app.models import ApiToken, User, utcnow

MAX_DAYS = 3650

# Built once: every API request asks it, and building a statement (and its cache key) on
# each call cost about as much as running it.
_LIVE_TOKEN = (
    select(User, ApiToken.id, ApiToken.expires_at)
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(ApiToken.token_hash == bindparam("digest"))
)


def create(
    *, session: Session, user: User, name: str = "", expires_in_days: int | None = None
) -> tuple[str, ApiToken]:
    name = name.strip()
    if len(name) > 100:
        raise InvalidInputError("a token's name is at most 100 characters")
    if expires_in_days is not None and not 1 <= expires_in_days <= MAX_DAYS:
        raise InvalidInputError(f"a token expires after 1 to {MAX_DAYS} days, or never")
    token, digest = new_token()
    row = ApiToken(
        user_id=user.id,
        name=name,
        token_hash=digest,
        expires_at=None if expires_in_days is None else utcnow() + timedelta(days=expires_in_days),
    )
    session.add(row)
    session.flush()
    return token, row


def user_for(*, session: Session, token: str) -> User | None:
    """The token's user when the token is live and the account enabled (one query: every
    API request asks)."""
    found = session.execute(_LIVE_TOKEN, {"digest": token_hash(token)}).first()
    if found is None:
        return None
    user, token_id, expires_at = found
    if (expires_at is not None and expires_at <= utcnow()) or user.disabled_at is not None:
        return None
    usage.token_used(token_id)
    return user


def of_user(*, session: Session, user: User) -> list[ApiToken]:
    return list(
        session.scalars(select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id))
    )


def revoke(*, session: Session, user: User, token_id: int) -> bool:
    """Delete one of ``user``'s tokens; False when they have no such token."""
    gone = session.execute(
        delete(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user.id)
    )
    return bool(getattr(gone, "rowcount", 0))
