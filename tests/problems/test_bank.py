"""Every problem in the bank passes `jaxjudge check` and meets the bank's bar."""

from __future__ import annotations

import pytest

from grader.cases import argument_signature
from grader.check import MIN_MISTAKES, check_problem, render
from grader.expected import compile_signature
from grader.problems.problem import load_problem, problem_folders

FOLDERS = problem_folders()
SLUGS = [folder.name for folder in FOLDERS]


def test_the_bank_holds_the_contracted_problems() -> None:
    """At least 15 problems in at least three tracks (issue 16)."""
    assert {load_problem(folder).config.track for folder in FOLDERS} == {
        "gradient-accumulation",
        "jax-foundations",
        "optax-and-flax",
    }
    assert SLUGS == [
        "data-parallel-accumulation",
        "dropout-per-microbatch",
        "ema-with-scan",
        "linen-trainstate-accumulation",
        "loss-scaling-float16",
        "lr-warmup-cosine",
        "memory-bounded-accumulation",
        "multisteps-with-schedule",
        "nnx-grad-accumulation",
        "nnx-running-statistics",
        "nnx-scan-accumulation",
        "optax-clip-decay-order",
        "optax-custom-transformation",
        "optax-multisteps",
        "pairwise-distances",
        "per-example-grads",
        "prng-layer-init",
        "pytree-momentum-decay",
        "scan-microbatched-grads",
        "stable-logsumexp",
        "train-with-accumulation",
        "weighted-accumulator",
        "weighted-microbatches",
    ]


@pytest.mark.parametrize("folder", FOLDERS, ids=SLUGS)
def test_problem_shape(folder: object) -> None:
    problem = load_problem(folder)  # type: ignore[arg-type]
    assert len(problem.mistakes) >= MIN_MISTAKES
    hidden = list(problem.case_bank.for_variant(0))
    samples = list(problem.case_bank.samples)
    assert len(hidden) >= 3
    sample_shapes = {argument_signature(v) for c in samples for v in c.args.values()}
    hidden_only = {argument_signature(v) for c in hidden for v in c.args.values()} - sample_shapes
    assert hidden_only, "hidden cases must use shapes the samples do not show"
    assert len(problem.hints) >= 2
    assert all(part.entry_point in problem.starter for part in problem.parts)


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


def _shape_signature(case: object) -> tuple[object, ...]:
    return tuple(argument_signature(arg) for arg in case.args.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("folder", FOLDERS, ids=SLUGS)
def test_hidden_cases_of_one_shape_share_one_compilation(folder: object) -> None:
    """Every distinct compile is learner-visible time: hidden cases that share their
    shapes must also share their static values (seed, counts), so that a submission
    compiles once per shape group, not once per case."""
    problem = load_problem(folder)  # type: ignore[arg-type]
    for variant in (0, 7):
        hidden = problem.case_bank.for_variant(variant)
        compiles = {compile_signature(case) for case in hidden}
        shapes = {_shape_signature(case) for case in hidden}
        assert len(compiles) == len(shapes), [case.name for case in hidden]


def test_the_proofs_name_the_bank_as_it_is() -> None:
    """problems/proven.txt lists each bank problem's content hash as test_check_passes
    proves it (a first version with one goes live at sync, app/data/catalog.py): a bank
    problem changed without its proof renewed waits for a check."""
    from app.data.catalog import BANK_PROOFS, bank_proofs
    from grader.problems.source import ProblemSource

    current = {(folder.name, ProblemSource.of(folder).content_hash()) for folder in FOLDERS}
    lines = "\n".join(f"{slug} {digest}" for slug, digest in sorted(current))
    assert bank_proofs() == current, f"after the bank's check passes, {BANK_PROOFS} holds:\n{lines}"
