"""Tests for pairwise-distances: the properties of a table of squared distances that
no single expected output shows. Each test draws its inputs from its ``rng`` (hidden
tests: fresh for every submission) and yields one round of calls."""

import numpy as np

from grader.author_tests import call, test

SIZES = (1, 7, 33)


def _close(actual, expected, what):
    """Within the problem's tolerance (atol 1e-3, rtol 1e-4), else the worst entry."""
    gap = np.abs(actual - expected) - (1e-3 + 1e-4 * np.abs(expected))
    worst = np.unravel_index(np.argmax(gap), gap.shape)
    assert gap[worst] <= 0, (
        f"{what} differs at {tuple(int(i) for i in worst)}:"
        f" {actual[worst]:.6g} where {expected[worst]:.6g} was expected"
    )


@test(
    points=0.5,
    message="The answer must be a (B, B) table, symmetric, with zeros on its diagonal, for any B (here 1, 7 and 33)",
)
def symmetric_with_zero_diagonal(rng):
    xs = [rng.normal(size=(b, 5)).astype(np.float32) for b in SIZES]
    outs = yield [call("pairwise_sq_dists", x=x) for x in xs]
    for x, out in zip(xs, outs, strict=True):
        b = len(x)
        d = np.asarray(out, dtype=np.float64)
        assert d.shape == (b, b), (
            f"for x of shape {x.shape} the answer has shape {d.shape}, not {(b, b)}"
        )
        asymmetry = float(np.abs(d - d.T).max())
        assert asymmetry <= 1e-4, (
            f"for B = {b}, D[i, j] and D[j, i] differ by up to {asymmetry:.3g}"
        )
        diagonal = float(np.abs(np.diagonal(d)).max())
        assert diagonal <= 1e-3, f"for B = {b}, a diagonal entry is {diagonal:.3g}, not 0"


@test(
    points=0.25,
    message="Reordering the rows must reorder the answer's rows and columns the same way",
    hidden=True,
)
def rows_reordered(rng):
    x = rng.normal(size=(10, 4)).astype(np.float32)
    order = rng.permutation(len(x))
    before, after = yield [call("pairwise_sq_dists", x=x), call("pairwise_sq_dists", x=x[order])]
    before, after = np.asarray(before, dtype=np.float64), np.asarray(after, dtype=np.float64)
    assert before.shape == after.shape == (10, 10), "the answer is not (B, B)"
    _close(after, before[order][:, order], "the table of the reordered rows")


@test(
    points=0.25,
    message="Adding the same vector to every row must not change the distances",
    hidden=True,
)
def translation_changes_nothing(rng):
    x = rng.normal(size=(9, 6))
    shift = rng.normal(scale=3.0, size=(1, 6))
    here, there = yield [
        call("pairwise_sq_dists", x=x.astype(np.float32)),
        call("pairwise_sq_dists", x=(x + shift).astype(np.float32)),
    ]
    here, there = np.asarray(here, dtype=np.float64), np.asarray(there, dtype=np.float64)
    assert here.shape == there.shape == (9, 9), "the answer is not (B, B)"
    _close(there, here, "the table of the shifted rows")


@test(
    points=0.25,
    message="No squared distance may be negative, even between equal rows far from the origin",
    hidden=True,
)
def never_negative(rng):
    # Rows a thousandth apart, tens of units from the origin, one of them repeated:
    # |a|^2 + |b|^2 - 2 a.b rounds to numbers on either side of 0 here.
    centre = rng.uniform(20.0, 40.0, size=(1, 8)) * rng.choice([-1.0, 1.0], size=(1, 8))
    x = (centre + 1e-3 * rng.normal(size=(33, 8))).astype(np.float32)
    x[0] = x[1 + rng.integers(32)]
    (d,) = yield [call("pairwise_sq_dists", x=x)]
    d = np.asarray(d, dtype=np.float64)
    smallest = float(d.min())
    assert smallest >= 0.0, f"the smallest entry is {smallest:.3g}"
