"""Accounts: creating users, finding them by name, signing in, passwords, disabling.

Names have one canonical form (app/core/names.py) and passwords a policy
(app/core/passwords.py). Signing in costs the same Argon2 work whether or not
the name exists. Failed sign-ins of an account delay its next one
exponentially (30 s after the fifth, doubling, at most 15 minutes), recorded
in the database so every server instance sees it: an attacker cannot guess
fast, and cannot lock the owner out for longer than the current delay.
Unknown names are delayed the same way (in memory), so the delay says
nothing about whether an account exists.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.core import names, passwords
from app.core.security import hash_password, verify_password
from app.errors import ConflictError, InvalidInputError
from app.models import ROLES, ApiToken, User, WebSession, utcnow
from app.vocabulary import IdSource, Role

# Not an Argon2 hash: no password ever verifies against it. An account made by an LMS
# launch or a single sign-on has it until its owner sets one (a reset link).
NO_PASSWORD = "!none"
FREE_FAILURES = 5
FIRST_DELAY = timedelta(seconds=30)
MAX_DELAY = timedelta(minutes=15)


def sign_in_delay(failures: int) -> timedelta:
    """How long an account waits after ``failures`` consecutive failed sign-ins."""
    if failures < FREE_FAILURES:
        return timedelta(0)
    delay: timedelta = FIRST_DELAY * 2 ** min(failures - FREE_FAILURES, 10)
    return min(MAX_DELAY, delay)


def create_user(*, session: Session, name: str, password: str, role: str = Role.LEARNER) -> User:
    if role not in ROLES:
        raise InvalidInputError(f"unknown role {role!r}; one of {', '.join(ROLES)}")
    if (problem := names.problem_with(name)) is not None:
        raise InvalidInputError(problem)
    if (problem := passwords.problem_with(password, name=name)) is not None:
        raise InvalidInputError(problem)
    canonical = names.canonical(name)
    if session.scalar(select(User.id).where(User.canonical_name == canonical)) is not None:
        raise ConflictError(f"the user name {name!r} is taken")
    user = User(
        name=name, canonical_name=canonical, password_hash=hash_password(password), role=role
    )
    session.add(user)
    session.flush()
    return user


def new_account_without_password(*, session: Session, name: str, role: str) -> User:
    """An account made by an identity provider's first sign-in: a valid, free name (the
    caller's ``unused_name``) and no password until its owner sets one."""
    user = User(
        name=name, canonical_name=names.canonical(name), password_hash=NO_PASSWORD, role=role
    )
    session.add(user)
    session.flush()
    return user


def has_password(user: User) -> bool:
    """Whether a password can sign ``user`` in (an LMS or SSO account has none at first)."""
    return user.password_hash.startswith("$argon2")


def _name_from(*, email: str, full_name: str, subject: str, prefix: str) -> str:
    """A valid user name: the email's local part, else the name, made ASCII; for a
    provider that shares neither, ``prefix`` and a digest of the subject (stable, and
    unlikely to be taken)."""
    source = email.split("@", 1)[0] if email else full_name
    ascii_name = unicodedata.normalize("NFKD", source).encode("ascii", "ignore").decode()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_name).strip(".-_")[:28]
    if names.NAME.match(name):
        return name
    return f"{prefix}-" + hashlib.sha256(subject.encode()).hexdigest()[:10]


def unused_name(*, session: Session, email: str, full_name: str, subject: str, prefix: str) -> str:
    """A free user name for an account an LMS or an identity provider makes: the one
    ``_name_from`` derives, else it with ``-2``, ``-3``, ..."""
    base = _name_from(email=email, full_name=full_name, subject=subject, prefix=prefix)
    for suffix in ["", *(f"-{n}" for n in range(2, 1000))]:
        candidate = base + suffix
        taken = session.scalar(
            select(User.id).where(User.canonical_name == names.canonical(candidate))
        )
        if taken is None:
            return candidate
    raise ConflictError("No free user name could be made for this account.")


def user_by_name(*, session: Session, name: str) -> User | None:
    """By exact name first (a legacy look-alike account, migration 0006, keeps its own),
    then by canonical form (``ALICE`` signs in as ``alice``)."""
    return session.scalar(select(User).where(User.name == name)) or session.scalar(
        select(User).where(User.canonical_name == names.canonical(name))
    )


class _UnknownNames:
    """Failed sign-ins of names that have no account, kept in memory (bounded)."""

    def __init__(self, capacity: int = 10_000) -> None:
        self._failures: OrderedDict[str, tuple[int, datetime]] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def blocked_until(self, name: str) -> datetime | None:
        with self._lock:
            entry = self._failures.get(names.canonical(name))
            return entry[1] if entry else None

    def failed(self, name: str, now: datetime) -> None:
        key = names.canonical(name)
        with self._lock:
            failures = self._failures.pop(key, (0, now))[0] + 1
            self._failures[key] = (failures, now + sign_in_delay(failures))
            while len(self._failures) > self._capacity:
                self._failures.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()


unknown_names = _UnknownNames()


@dataclass(frozen=True)
class SignIn:
    """The outcome of a sign-in: a user, or a reason, or how long to wait."""

    user: User | None = None
    wait_seconds: int = 0
    disabled: bool = False


def authenticate(*, session: Session, name: str, password: str) -> SignIn:
    now = utcnow()
    user = user_by_name(session=session, name=name)
    blocked = user.sign_in_blocked_until if user else unknown_names.blocked_until(name)
    if blocked is not None and blocked > now:
        return SignIn(wait_seconds=int((blocked - now).total_seconds()) + 1)
    correct = verify_password(user.password_hash if user else None, password)
    if user is None:
        unknown_names.failed(name, now)
        return SignIn()
    if not correct:
        user.failed_sign_ins += 1
        user.sign_in_blocked_until = now + sign_in_delay(user.failed_sign_ins)
        return SignIn()
    user.failed_sign_ins, user.sign_in_blocked_until = 0, None
    if user.disabled_at is not None:
        return SignIn(disabled=True)
    return SignIn(user=user)


def change_password(
    *, session: Session, user: User, current: str, new: str, keep_session: int | None = None
) -> int:
    """Set a new password; every other web session of the user ends. Returns how many."""
    if not verify_password(user.password_hash, current):
        raise InvalidInputError("the current password is wrong")
    if (problem := passwords.problem_with(new, name=user.name)) is not None:
        raise InvalidInputError(problem)
    user.password_hash = hash_password(new)
    others = delete(WebSession).where(WebSession.user_id == user.id)
    if keep_session is not None:
        others = others.where(WebSession.id != keep_session)
    ended = session.execute(others)
    session.flush()
    return int(getattr(ended, "rowcount", 0) or 0)


def reset_password(*, session: Session, user: User, new: str) -> int:
    """Set a password from a reset link (or a first one, for an LMS or SSO account):
    every web session of the user ends and the sign-in delay is cleared; API tokens
    are left alone (the page says so). Returns how many sessions ended."""
    if (problem := passwords.problem_with(new, name=user.name)) is not None:
        raise InvalidInputError(problem)
    user.password_hash = hash_password(new)
    user.failed_sign_ins, user.sign_in_blocked_until = 0, None
    ended = session.execute(delete(WebSession).where(WebSession.user_id == user.id))
    session.flush()
    return int(getattr(ended, "rowcount", 0) or 0)


def set_disabled(*, session: Session, user: User, disabled: bool) -> None:
    """A disabled account's sessions and tokens stop working at once (checked on every
    request); its sessions are also deleted, and its tokens kept for re-enabling."""
    user.disabled_at = utcnow() if disabled else None
    if disabled:
        session.execute(delete(WebSession).where(WebSession.user_id == user.id))
    session.flush()


def active(user: User | None) -> User | None:
    return user if user is not None and user.disabled_at is None else None


def all_users(*, session: Session) -> list[tuple[User, int]]:
    """Every user with the number of API tokens they hold, by name."""
    users = list(session.scalars(select(User).order_by(User.canonical_name)))
    tokens = dict.fromkeys((u.id for u in users), 0)
    for (user_id,) in session.execute(select(ApiToken.user_id)):
        tokens[user_id] = tokens.get(user_id, 0) + 1
    return [(user, tokens[user.id]) for user in users]


EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,190}$")


def set_profile(
    *, session: Session, user: User, display_name: str, email: str, student_id: str
) -> None:
    """What the user's courses export of them: a name for people, an email, and the
    university's student id (an instructor's mapping in a course wins over it)."""
    display_name, email, student_id = display_name.strip(), email.strip(), student_id.strip()
    if len(display_name) > 120:
        raise InvalidInputError("A display name is at most 120 characters.")
    if email and not EMAIL.match(email):
        raise InvalidInputError("That does not look like an email address.")
    if len(student_id) > 64:
        raise InvalidInputError("A student id is at most 64 characters.")
    _refuse_given(user, email=email, student_id=student_id)
    if student_id != user.student_id:  # typed by the learner: nothing vouches for it
        user.student_id_source = IdSource.SELF_DECLARED if student_id else IdSource.NONE
    if email != user.email:  # a new address is unverified until its link is followed
        user.email_source = IdSource.SELF_DECLARED if email else IdSource.NONE
        user.email_verified_at = None
    user.display_name, user.email, user.student_id = display_name, email, student_id
    session.flush()


# Given by the university's sign-in or the LMS: shown read-only on the account page.
GIVEN_SOURCES = frozenset({IdSource.SSO, IdSource.LMS})
_GIVER = {IdSource.SSO: "your university's sign-in", IdSource.LMS: "your LMS"}


def _refuse_given(user: User, *, email: str, student_id: str) -> None:
    """A learner cannot type over an id that SSO or the LMS gave (a forged form)."""
    if user.student_id_source in GIVEN_SOURCES and student_id != user.student_id:
        raise InvalidInputError(
            f"Your student id came from {_GIVER[IdSource(user.student_id_source)]}"
            " and cannot be changed here."
        )
    if user.email_source in GIVEN_SOURCES and email != user.email:
        raise InvalidInputError(
            f"Your email came from {_GIVER[IdSource(user.email_source)]}"
            " and cannot be changed here."
        )
