"""A problem's quiz (`quiz.toml`, optional): questions with choices, the correct ones, and
an explanation for every choice, shown once the learner has answered.

    [[questions]]
    id = "why-divide"
    prompt = "Why divide the summed gradients by the number of micro-batches?"
    [[questions.choices]]
    text = "So the update matches one step on the whole batch's mean loss."
    correct = true
    explanation = "The loss is a mean over examples; its gradient is too."
    [[questions.choices]]
    text = "To make the optimizer converge faster."
    explanation = "Scaling the gradient changes the step size, not what it estimates."

A question with more than one correct choice is answered with check boxes (all the
correct ones and nothing else); otherwise with radio buttons. Validated strictly:
`jaxjudge check` reports the first problem with its field.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from grader.problems.schema_errors import schema_error, toml_error

QUESTION_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")


class Choice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, max_length=500)
    correct: bool = False
    explanation: str = Field(min_length=1, max_length=2000)


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    prompt: str = Field(min_length=1, max_length=2000)
    choices: tuple[Choice, ...] = Field(min_length=2, max_length=8)

    @field_validator("id")
    @classmethod
    def _slug_like(cls, value: str) -> str:
        if not QUESTION_ID.match(value):
            raise ValueError(
                f"{value!r} is not allowed: use lowercase letters, digits and '-', at most 40"
                " characters, starting with a letter or digit"
            )
        return value

    @model_validator(mode="after")
    def _some_correct(self) -> Question:
        if not any(choice.correct for choice in self.choices):
            raise ValueError(f"question {self.id!r} has no correct choice")
        if len({choice.text for choice in self.choices}) != len(self.choices):
            raise ValueError(f"question {self.id!r} repeats a choice")
        return self

    @property
    def multiple(self) -> bool:
        return sum(choice.correct for choice in self.choices) > 1

    @property
    def correct_indices(self) -> frozenset[int]:
        return frozenset(i for i, choice in enumerate(self.choices) if choice.correct)

    def is_correct(self, picked: frozenset[int]) -> bool:
        return picked == self.correct_indices


class Quiz(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    questions: tuple[Question, ...] = Field(min_length=1, max_length=20)

    @model_validator(mode="after")
    def _unique_ids(self) -> Quiz:
        ids = [question.id for question in self.questions]
        if len(set(ids)) != len(ids):
            raise ValueError("question ids must be unique")
        return self

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)


def load_quiz(folder: Path) -> Quiz | None:
    """The folder's quiz, None without a quiz.toml; a ProblemError when it is invalid."""
    path = folder / "quiz.toml"
    if not path.is_file():
        return None
    text = path.read_text()
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise toml_error(path, error) from None
    try:
        return Quiz.model_validate(raw)
    except ValidationError as error:
        raise schema_error(path, error, text, Quiz) from None
