"""Schema errors speak the author's language (grader/problems/schema_errors.py): the
file, its line where the field is written, the field, and what is allowed there."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grader.errors import ProblemError
from grader.problems.problem import ProblemConfig, load_problem
from grader.problems.quiz import Quiz
from grader.problems.scaffold import scaffold, scaffold_files
from grader.problems.schema_errors import ALLOWED_BY_PATTERN

TOML = scaffold_files("tiny")["problems/tiny/problem.toml"].decode()
# Lines of the scaffold's problem.toml the table below names.
LINE = {key: n for n, line in enumerate(TOML.splitlines(), 1) for key in [line.split(" ")[0]]}
QUIZ = """[[questions]]
id = "why-scale"
prompt = "Why?"

[[questions.choices]]
text = "Because"
correct = true
explanation = "It is."

[[questions.choices]]
text = "Why not"
explanation = "No."
"""


def _replace(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


COMMON_MISTAKES: list[tuple[str, Callable[[str], str], str]] = [
    (
        "bad track",
        _replace('track = "my-track"', 'track = "My Track"'),
        f"problem.toml line {LINE['track']}: track: 'My Track' is not allowed: use lowercase"
        " letters and digits, words joined by single hyphens (like my-track)",
    ),
    (
        "bad argument identifier",
        _replace('arguments = ["x", "scale"]', 'arguments = ["x", "2scale"]'),
        f"problem.toml line {LINE['arguments']}: arguments: '2scale' is not allowed: use a Python"
        " name (letters, digits and underscores, not starting with a digit)",
    ),
    (
        "bad output name",
        _replace('name = "result"', 'name = "the result"'),
        "outputs #1.name: 'the result' is not allowed: use a Python name",
    ),
    (
        "bad regime name",
        _replace('name = "negative-scale"', 'name = "Negative scale"'),
        "regimes #1.name: 'Negative scale' is not allowed: use lowercase letters",
    ),
    (
        "unknown field",
        _replace("position = 1", "position = 1\ncolour = 'red'"),
        f"problem.toml line {LINE['position'] + 1}: colour: unknown field; allowed here: title,"
        " track, position,",
    ),
    (
        "wrong type",
        _replace("position = 1", 'position = "first"'),
        f"problem.toml line {LINE['position']}: position: 'first' is not allowed: use a whole"
        " number",
    ),
    (
        "not one of the choices",
        _replace('difficulty = "easy"', 'difficulty = "trivial"'),
        "difficulty: 'trivial' is not allowed: use 'easy', 'medium' or 'hard'",
    ),
    (
        "negative limit",
        _replace("cpu_seconds = 10", "cpu_seconds = -1"),
        f"problem.toml line {LINE['cpu_seconds']}: limits.cpu_seconds: -1 is out of range: it"
        " must be more than 0",
    ),
    (
        "tolerance missing",
        _replace("[tolerance]\nrtol = 1e-5\natol = 1e-6\n", ""),
        "problem.toml: tolerance: is required and missing (see docs/authoring.md)",
    ),
    (
        "tolerance of an output missing its atol",
        _replace(
            'description = "float array with the same shape as x"\n',
            'description = "float array with the same shape as x"\n\n'
            "[outputs.tolerance]\nrtol = 1e-3\n",
        ),
        f"problem.toml line {LINE['description'] + 2}: outputs #1.tolerance.atol: is required and"
        " missing",
    ),
    (
        "unknown device in tolerances",
        _replace("atol = 1e-6\n", "atol = 1e-6\n\n[tolerance.tpu]\nrtol = 1e-3\natol = 1e-3\n"),
        "tolerance.tpu: unknown field; allowed in tolerance: rtol, atol, gpu",
    ),
    (
        "bad TOML syntax",
        _replace('title = "Tiny"', 'title = "Tiny'),
        f"problem.toml line {LINE['title']}: invalid TOML syntax: ",
    ),
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    scaffold("tiny", tmp_path)
    return tmp_path / "problems" / "tiny"


def _error(folder: Path) -> str:
    with pytest.raises(ProblemError) as caught:
        load_problem(folder)
    message = str(caught.value)
    # Never a regular expression, a Pydantic type name or its wording.
    assert not re.search(r"\^|\$|\[a-z|Input should|pydantic|_type\b", message), message
    return message


@pytest.mark.parametrize(
    ("edit", "expected"),
    [pytest.param(edit, expected, id=name) for name, edit, expected in COMMON_MISTAKES],
)
def test_common_mistakes_are_explained(
    folder: Path, edit: Callable[[str], str], expected: str
) -> None:
    toml = folder / "problem.toml"
    toml.write_text(edit(toml.read_text()))
    assert expected in _error(folder)


def test_a_bad_folder_name_says_what_is_allowed(folder: Path) -> None:
    renamed = folder.parent / "My_Problem"
    shutil.move(folder, renamed)
    assert "the folder name 'My_Problem' is not allowed: use lowercase letters and digits" in (
        _error(renamed)
    )


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            _replace('id = "why-scale"', 'id = "Why Scale"'),
            "quiz.toml line 2: questions #1.id: 'Why Scale' is not allowed: use lowercase letters",
        ),
        (
            _replace('prompt = "Why?"', 'prompt = "Why?"\nhint = "no"'),
            "quiz.toml line 4: questions #1.hint: unknown field; allowed in questions #1: id,"
            " prompt, choices",
        ),
        (
            _replace("correct = true", "correct = yes"),
            "quiz.toml line 7: invalid TOML syntax: ",
        ),
        (
            _replace('explanation = "No."', 'explanation = ""'),
            "quiz.toml line 12: questions #1.choices #2.explanation: needs at least 1 character(s)",
        ),
    ],
)
def test_quiz_mistakes_are_explained(
    folder: Path, edit: Callable[[str], str], expected: str
) -> None:
    (folder / "quiz.toml").write_text(edit(QUIZ))
    assert expected in _error(folder)


def _patterns(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        found = {schema["pattern"]} if isinstance(schema.get("pattern"), str) else set()
        return found.union(*(_patterns(value) for value in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_patterns(value) for value in schema))
    return set()


def test_every_pattern_of_the_schemas_is_explained_in_words() -> None:
    patterns = _patterns(ProblemConfig.model_json_schema()) | _patterns(Quiz.model_json_schema())
    assert patterns and patterns <= set(ALLOWED_BY_PATTERN)
