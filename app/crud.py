"""Data functions: keyword-only arguments, no HTTP concerns."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.security import MIN_PASSWORD_LENGTH, hash_password, new_token, token_hash
from app.models import ROLES, ApiToken, HintReveal, Submission, User, utcnow


class CrudError(ValueError):
    """A request that cannot be carried out, with a message for people."""


def create_user(*, session: Session, name: str, password: str, role: str = "learner") -> User:
    if role not in ROLES:
        raise CrudError(f"unknown role {role!r}; one of {', '.join(ROLES)}")
    if (
        not 1 <= len(name) <= 64
        or not name.replace("-", "").replace("_", "").replace(".", "").isalnum()
    ):
        raise CrudError("a user name is 1-64 letters, digits, '.', '-' or '_'")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise CrudError(f"a password has at least {MIN_PASSWORD_LENGTH} characters")
    if session.scalar(select(User).where(User.name == name)):
        raise CrudError(f"the user name {name!r} is taken")
    user = User(name=name, password_hash=hash_password(password), role=role)
    session.add(user)
    session.flush()
    return user


def user_by_name(*, session: Session, name: str) -> User | None:
    return session.scalar(select(User).where(User.name == name))


def create_token(*, session: Session, user: User) -> str:
    token, digest = new_token()
    session.add(ApiToken(user_id=user.id, token_hash=digest))
    session.flush()
    return token


def user_for_token(*, session: Session, token: str) -> User | None:
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(token)))
    if row is None:
        return None
    row.last_used_at = utcnow()
    return session.get(User, row.user_id)


def queued_count(*, session: Session, user_id: int) -> int:
    return (
        session.scalar(
            select(func.count()).where(Submission.user_id == user_id, Submission.status != "done")
        )
        or 0
    )


def submits_in_the_last_hour(*, session: Session, user_id: int, problem: str) -> int:
    since = utcnow() - timedelta(hours=1)
    return (
        session.scalar(
            select(func.count()).where(
                Submission.user_id == user_id,
                Submission.problem == problem,
                Submission.mode == "submit",
                Submission.created_at >= since,
            )
        )
        or 0
    )


def create_submission(
    *,
    session: Session,
    user: User,
    problem: str,
    code: str,
    mode: str,
    max_queued: int,
    version_id: int | None = None,
    max_submits_per_hour: int | None = None,
) -> Submission:
    if queued_count(session=session, user_id=user.id) >= max_queued:
        raise CrudError(
            f"you already have {max_queued} submissions waiting; wait for one to finish"
        )
    if (
        mode == "submit"
        and max_submits_per_hour is not None
        and submits_in_the_last_hour(session=session, user_id=user.id, problem=problem)
        >= max_submits_per_hour
    ):
        raise CrudError(
            f"you have submitted {max_submits_per_hour} times to this problem in the last hour;"
            " Run the samples meanwhile (not limited), and submit again later"
        )
    submission = Submission(
        user_id=user.id,
        problem=problem,
        code=code,
        mode=mode,
        problem_version_id=version_id,
        hidden_draw=secrets.randbelow(2**31),
    )
    session.add(submission)
    session.flush()
    return submission


def result_of(submission: Submission) -> dict[str, Any] | None:
    return json.loads(submission.result_json) if submission.result_json else None


def hints_revealed(*, session: Session, user: User, problem: str) -> int:
    row = session.scalar(
        select(HintReveal).where(HintReveal.user_id == user.id, HintReveal.problem == problem)
    )
    return row.revealed if row else 0


def reveal_next_hint(*, session: Session, user: User, problem: str, available: int) -> int:
    """Reveal one more hint (never past the last); returns how many are revealed."""
    row = session.scalar(
        select(HintReveal).where(HintReveal.user_id == user.id, HintReveal.problem == problem)
    )
    if row is None:
        row = HintReveal(user_id=user.id, problem=problem, revealed=0)
        session.add(row)
    row.revealed = min(available, row.revealed + 1)
    row.updated_at = utcnow()
    session.flush()
    return row.revealed


def has_solved(*, session: Session, user: User, problem: str) -> bool:
    return (
        session.scalar(
            select(Submission.id)
            .where(
                Submission.user_id == user.id,
                Submission.problem == problem,
                Submission.mode == "submit",
                Submission.verdict == "accepted",
            )
            .limit(1)
        )
        is not None
    )


def submission_history(*, session: Session, user: User, problem: str) -> list[Submission]:
    """The learner's submits for a problem, newest first (runs are not attempts)."""
    return list(
        session.scalars(
            select(Submission)
            .where(
                Submission.user_id == user.id,
                Submission.problem == problem,
                Submission.mode == "submit",
            )
            .order_by(Submission.id.desc())
        )
    )
