"""Password hashing (Argon2) and API tokens (random, stored only as SHA-256)."""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()
# Verified against when a name is unknown, so that a sign-in costs the same
# Argon2 work whether or not the account exists (no timing oracle on names).
_DUMMY_HASH = _hasher.hash("jaxjudge: no such account")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """Constant work: an unknown account (None) verifies against a dummy hash."""
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def new_token() -> tuple[str, str]:
    """A new API token and the hash to store."""
    token = "jj_" + secrets.token_urlsafe(32)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
