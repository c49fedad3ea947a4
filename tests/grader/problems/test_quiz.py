"""quiz.toml: loaded strictly, every mistake in it named with its field."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.errors import ProblemError
from grader.problems.quiz import load_quiz

GOOD = """
[[questions]]
id = "q1"
prompt = "Which?"
[[questions.choices]]
text = "this"
correct = true
explanation = "because"
[[questions.choices]]
text = "that"
explanation = "not because"
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "quiz.toml").write_text(text)
    return tmp_path


def test_a_folder_without_a_quiz_has_none(tmp_path: Path) -> None:
    assert load_quiz(tmp_path) is None


def test_a_valid_quiz_and_how_answers_are_judged(tmp_path: Path) -> None:
    quiz = load_quiz(_write(tmp_path, GOOD))
    assert quiz is not None
    (question,) = quiz.questions
    assert not question.multiple
    assert question.is_correct(frozenset({0})) and not question.is_correct(frozenset({0, 1}))
    two_right = GOOD.replace('text = "that"', 'text = "that"\ncorrect = true')
    assert load_quiz(_write(tmp_path, two_right)).questions[0].multiple  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("correct = true\n", ""), "has no correct choice"),
        (lambda t: t.replace('text = "that"', 'text = "this"'), "repeats a choice"),
        (
            lambda t: t.replace('explanation = "because"\n', ""),
            "questions #1.choices #1.explanation: is required",
        ),
        (lambda t: t.replace('id = "q1"', 'id = "Q 1"'), "questions #1.id: 'Q 1' is not allowed"),
        (lambda t: t + t, "question ids must be unique"),
        (
            lambda t: t.replace('prompt = "Which?"', 'prompt = "Which?"\nhint = "x"'),
            "unknown field",
        ),
        (lambda t: t + "[[", "invalid TOML"),
    ],
    ids=["no-correct", "repeated", "no-explanation", "bad-id", "duplicate-ids", "unknown", "toml"],
)
def test_every_invalid_quiz_is_named(tmp_path: Path, change: object, message: str) -> None:
    with pytest.raises(ProblemError, match=message.replace(".", r"\.")):
        load_quiz(_write(tmp_path, change(GOOD)))  # type: ignore[operator]
