"""The tool's own RSA keys: they sign client assertions (services) and deep-linking
responses, and their public halves are served at ``/lti/jwks``.

Keys live in the database so every server instance signs with the same one. The
newest key signs. Rotating makes a new key and retires the old one, which stays in
the public JWKS for ``RETIRED_KEPT`` so that what it signed (a deep-linking
response in flight, a platform's cached copy of the set) still verifies.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.db import session_scope
from app.models import LtiKey, utcnow

RETIRED_KEPT = timedelta(days=1)
ALGORITHM = "RS256"


def _new_key(session: Session) -> LtiKey:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    key = LtiKey(kid=secrets.token_urlsafe(12), private_pem=pem)
    session.add(key)
    session.flush()
    return key


@dataclass(frozen=True)
class SigningKey:
    kid: str
    private_pem: str


def _newest(session: Session) -> SigningKey | None:
    key = session.scalar(
        select(LtiKey).where(LtiKey.retired_at.is_(None)).order_by(LtiKey.id.desc()).limit(1)
    )
    return SigningKey(key.kid, key.private_pem) if key else None


def signing_key(session: Session) -> SigningKey:
    """The newest live key. The first is made on first use in a transaction of its own,
    committed at once: the caller's transaction may be about to wait on the platform,
    which may be fetching this very key set."""
    key = _newest(session)
    if key is None:
        with session_scope() as own:
            key = _newest(own)
            if key is None:
                made = _new_key(own)
                key = SigningKey(made.kid, made.private_pem)
    return key


def rotate(session: Session) -> LtiKey:
    """A new signing key; the others retire (still published for ``RETIRED_KEPT``)."""
    for key in session.scalars(select(LtiKey).where(LtiKey.retired_at.is_(None))):
        key.retired_at = utcnow()
    return _new_key(session)


def public_jwks() -> dict[str, list[dict[str, Any]]]:
    """The public set: live keys and those retired less than ``RETIRED_KEPT`` ago (read
    in a transaction of its own, after the first key is made)."""
    with session_scope() as session:
        signing_key(session)
    with session_scope() as session:
        return _published(session)


def _published(session: Session) -> dict[str, list[dict[str, Any]]]:
    cutoff = utcnow() - RETIRED_KEPT
    keys = session.scalars(
        select(LtiKey)
        .where(LtiKey.retired_at.is_(None) | (LtiKey.retired_at > cutoff))
        .order_by(LtiKey.id.desc())
    )
    published = []
    for key in keys:
        private = serialization.load_pem_private_key(key.private_pem.encode(), password=None)
        assert isinstance(private, rsa.RSAPrivateKey)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
        published.append({**jwk, "kid": key.kid, "alg": ALGORITHM, "use": "sig"})
    return {"keys": published}


def sign(claims: dict[str, Any]) -> str:
    """``claims`` as a JWT signed with the current key (its kid in the header), read in
    a short transaction of its own: callers about to wait on an LMS hold none."""
    with session_scope() as session:
        key = signing_key(session)
    return jwt.encode(claims, key.private_pem, algorithm=ALGORITHM, headers={"kid": key.kid})
