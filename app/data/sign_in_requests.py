"""Sign-ins sent to an identity provider, kept on the server: the browser carries only a
random ``state`` (OIDC) or RelayState (SAML), stored here as its SHA-256. A request is
answered once, within ``LIFETIME``, by the protocol and provider that sent it; anything
else is the same refusal, so a forged, reused or stale answer learns nothing."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.errors import InvalidInputError
from app.models import SignInRequest, User, utcnow
from app.vocabulary import SignInProtocol

LIFETIME = timedelta(minutes=10)
STATE_LIMIT = 200  # a longer state is no state of ours


def _hash(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def start(
    *,
    session: Session,
    protocol: SignInProtocol,
    provider: str,
    next_path: str,
    nonce: str = "",
    code_verifier: str = "",
    request_id: str = "",
    link_user: User | None = None,
) -> str:
    """Record a sign-in about to be sent; returns the state the browser carries."""
    state = secrets.token_urlsafe(32)
    now = utcnow()
    session.execute(delete(SignInRequest).where(SignInRequest.expires_at < now - LIFETIME))
    session.add(
        SignInRequest(
            state_hash=_hash(state),
            protocol=protocol,
            provider=provider,
            nonce=nonce,
            code_verifier=code_verifier,
            request_id=request_id,
            next_path=next_path[:2000],
            link_user_id=link_user.id if link_user else None,
            created_at=now,
            expires_at=now + LIFETIME,
        )
    )
    session.flush()
    return state


def take(*, session: Session, protocol: SignInProtocol, provider: str, state: str) -> SignInRequest:
    """The request this state answers, marked used; InvalidInputError if there is none:
    unknown, already used, expired, or sent by another provider."""
    refused = InvalidInputError(
        "This sign-in link is not valid any more (used, expired or not from this site);"
        " start again from the sign-in page."
    )
    if not state or len(state) > STATE_LIMIT:
        raise refused
    request = session.scalar(select(SignInRequest).where(SignInRequest.state_hash == _hash(state)))
    if (
        request is None
        or request.used_at is not None
        or request.expires_at < utcnow()
        or request.protocol != protocol
        or request.provider != provider
    ):
        raise refused
    request.used_at = utcnow()
    session.flush()
    return request
