"""The password policy, after NIST SP 800-63B: long enough, not only spaces, not the
user's name, not a known common password. No composition rules, no expiry."""

from __future__ import annotations

from functools import cache

from app.core.config import PROJECT_ROOT

MIN_LENGTH = 10
MAX_LENGTH = 256  # Argon2 takes any length; a bound keeps a request's cost bounded
COMMON = PROJECT_ROOT / "app" / "core" / "common_passwords.txt"


@cache
def common_passwords() -> frozenset[str]:
    lines = COMMON.read_text().splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def problem_with(password: str, *, name: str) -> str | None:
    """Why ``password`` is refused for the user ``name``, in one sentence (None: it is fine)."""
    if len(password) < MIN_LENGTH:
        return f"a password has at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"a password has at most {MAX_LENGTH} characters"
    if not password.strip():
        return "a password cannot be only spaces"
    if password.strip().casefold() == name.strip().casefold():
        return "a password cannot be your user name"
    if password.casefold() in common_passwords():
        return "that password is among the most common ones attackers try first; choose another"
    return None
