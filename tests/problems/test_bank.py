"""Every problem in the bank passes `jaxjudge check` and meets the bank's bar."""

from __future__ import annotations

import pytest

from grader.check import MIN_MISTAKES, check_problem, render
from grader.problem import load_problem, problem_folders

FOLDERS = problem_folders()
SLUGS = [folder.name for folder in FOLDERS]


def test_the_bank_holds_the_five_contracted_problems() -> None:
    assert SLUGS == [
        "linen-trainstate-accumulation",
        "nnx-grad-accumulation",
        "optax-multisteps",
        "scan-microbatched-grads",
        "train-with-accumulation",
    ]


@pytest.mark.parametrize("folder", FOLDERS, ids=SLUGS)
def test_problem_shape(folder: object) -> None:
    problem = load_problem(folder)  # type: ignore[arg-type]
    assert len(problem.mistakes) >= MIN_MISTAKES
    hidden = list(problem.case_bank.for_variant(0))
    samples = list(problem.case_bank.samples)
    assert len(hidden) >= 3
    sample_shapes = {tuple(getattr(v, "shape", ())) for c in samples for v in c.args.values()}
    hidden_only = {
        tuple(getattr(v, "shape", ())) for c in hidden for v in c.args.values()
    } - sample_shapes
    assert hidden_only, "hidden cases must use shapes the samples do not show"
    assert len(problem.hints) >= 2
    assert problem.config.entry_point in problem.starter


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("folder", FOLDERS, ids=SLUGS)
def test_check_passes(folder: object) -> None:
    result = check_problem(folder)  # type: ignore[arg-type]
    assert result.ok, render(result, verbose=True)
    assert (
        len([note for note in result.notes if "rejected on all 16 variants" in note])
        >= MIN_MISTAKES
    )
