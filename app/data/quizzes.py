"""Quiz answers (keyword-only data functions): a learner's first answer to each
question of a problem's quiz (grader/problems/quiz.py), and how a group answered."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import InvalidInputError, NotFoundError
from app.models import QuizAnswer, User
from grader.problems.quiz import Quiz


def _indices(text: str) -> frozenset[int]:
    return frozenset(int(part) for part in text.split(",") if part)


def picked_of(answer: QuizAnswer) -> frozenset[int]:
    return _indices(answer.picked)


def answer(
    *, session: Session, user: User, problem: str, quiz: Quiz, question_id: str, picked: list[str]
) -> QuizAnswer:
    """Record ``user``'s answer; the first one stands (the explanations follow it)."""
    question = quiz.question(question_id)
    if question is None:
        raise NotFoundError(f"No question {question_id!r} in this quiz.")
    existing = session.scalar(
        select(QuizAnswer).where(
            QuizAnswer.user_id == user.id,
            QuizAnswer.problem == problem,
            QuizAnswer.question == question_id,
        )
    )
    if existing is not None:
        return existing
    try:
        chosen = frozenset(int(value) for value in picked)
    except ValueError:
        raise InvalidInputError("Pick the choices by their number.") from None
    if not chosen or not all(0 <= i < len(question.choices) for i in chosen):
        raise InvalidInputError("Pick at least one of the choices.")
    if not question.multiple and len(chosen) != 1:
        raise InvalidInputError("This question has one answer: pick one choice.")
    row = QuizAnswer(
        user_id=user.id,
        problem=problem,
        question=question_id,
        picked=",".join(str(i) for i in sorted(chosen)),
        correct=question.is_correct(chosen),
    )
    session.add(row)
    session.flush()
    return row


def answers_of(*, session: Session, user: User, problem: str) -> dict[str, QuizAnswer]:
    rows = session.scalars(
        select(QuizAnswer).where(QuizAnswer.user_id == user.id, QuizAnswer.problem == problem)
    )
    return {row.question: row for row in rows}


@dataclass
class QuestionRates:
    """How a group answered one question: who answered, who was right, each choice's picks."""

    answered: int = 0
    correct: int = 0
    picks: list[int] = field(default_factory=list)

    @property
    def correct_rate(self) -> float | None:
        return self.correct / self.answered if self.answered else None


def rates(
    *, session: Session, problem: str, quiz: Quiz, user_ids: list[int]
) -> dict[str, QuestionRates]:
    """Per question, over the answers of ``user_ids`` (a course's learners)."""
    found = {q.id: QuestionRates(picks=[0] * len(q.choices)) for q in quiz.questions}
    if not user_ids:
        return found
    rows = session.scalars(
        select(QuizAnswer).where(QuizAnswer.problem == problem, QuizAnswer.user_id.in_(user_ids))
    )
    for row in rows:
        tally = found.get(row.question)
        if tally is None:  # a question a later version removed
            continue
        tally.answered += 1
        tally.correct += row.correct
        for index in picked_of(row):
            if index < len(tally.picks):
                tally.picks[index] += 1
    return found
