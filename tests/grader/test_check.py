"""`jaxjudge check` on broken folders: precise errors, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.check import check_problem, render
from grader.problems.source import ProblemSource
from tests.grader.problems.test_problem import edit


def test_schema_errors_stop_before_running_anything(problem_copy: Path) -> None:
    folder = problem_copy
    edit(folder / "problem.toml", "estimated_minutes = 15", "estimated_minutes = 0")
    result = check_problem(folder)
    assert not result.ok
    assert "estimated_minutes: 0 is out of range: it must be at least 1" in result.errors[0]
    assert "FAILED" in render(result)


def test_an_invalid_quiz_is_reported_with_its_field(problem_copy: Path) -> None:
    folder = problem_copy
    (folder / "quiz.toml").write_text(
        '[[questions]]\nid = "q"\nprompt = "?"\n'
        '[[questions.choices]]\ntext = "a"\nexplanation = "e"\n'
        '[[questions.choices]]\ntext = "b"\nexplanation = "f"\n'
    )
    result = check_problem(folder)
    assert not result.ok
    assert "quiz.toml line 1: questions #1: question 'q' has no correct choice" in result.errors[0]


def test_non_deterministic_samples_are_caught(problem_copy: Path) -> None:
    folder = problem_copy
    edit(folder / "cases.py", "np.random.default_rng(3000 + seed)", "np.random.default_rng()")
    result = check_problem(folder)
    assert any("a sample differs between seeds 0 and 1" in error for error in result.errors)


def test_non_deterministic_hidden_cases_are_caught(problem_copy: Path) -> None:
    folder = problem_copy
    # Samples use seeds 0 and 1, hidden cases 102 and up: only the hidden ones go unseeded.
    edit(
        folder / "cases.py",
        "np.random.default_rng(3000 + seed)",
        "np.random.default_rng(3000 + seed if seed < 100 else None)",
    )
    result = check_problem(folder)
    assert any("differs between two generations" in error for error in result.errors)


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_mistake_too_close_to_the_reference_is_reported(problem_copy: Path) -> None:
    """On the CPU's tolerance, and on a GPU tolerance the problem states: a CPU check
    proves the mistakes separated by it too (how far a mistake is from the reference is
    the mistake's; `check --device gpu` measures it on the GPU's own outputs)."""
    folder = problem_copy
    # A "mistake" that is really correct: no hidden case can separate it.
    (folder / "mistakes" / "not_really_wrong.py").write_text(
        '"""Not actually a mistake."""\nimport jax.numpy as jnp\n'
        "def microbatched_grads(w, b, x_full, y_full, n_microbatches):\n"
        "    return jnp.sum(2.0 * (w * x_full - y_full) * x_full)\n"
    )
    edit(folder / "problem.toml", "[limits]", "[tolerance.gpu]\nrtol = 0.9\natol = 1e3\n\n[limits]")
    result = check_problem(folder)
    on_cpu = [e for e in result.errors if "from the reference by 10x the tolerance " in e]
    assert len(on_cpu) == 1
    assert on_cpu[0].startswith("mistakes/not_really_wrong.py: on variant ")
    assert "no hidden case separates it" in on_cpu[0]
    # Far too wide on the GPU: every mistake, each said once, and nothing else.
    on_gpu = [e for e in result.errors if "from the reference by 10x the GPU's tolerance" in e]
    assert len(on_gpu) == len(list((folder / "mistakes").glob("*.py")))
    assert len(result.errors) == len(on_cpu) + len(on_gpu)


@pytest.mark.slow
@pytest.mark.sandbox
def test_an_accepted_starter_and_a_broken_reference_are_reported(
    problem_copy: Path,
) -> None:
    folder = problem_copy
    reference = ProblemSource.of(folder).reference.read_text()
    (folder / "starter.py").write_text(reference)
    result = check_problem(folder)
    assert any("starter.py: the starter is accepted" in error for error in result.errors)

    ProblemSource.of(folder).reference.write_text(
        reference.replace("return total", "return total / 0 + undefined")
    )
    result = check_problem(folder)
    assert any(
        "the reference failed on case 'tiny': runtime_error" in error for error in result.errors
    )
