"""Which of a problem's hints a learner has revealed (revealed hints stay revealed)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import HintReveal, User, utcnow


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
