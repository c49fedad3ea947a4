"""Cases for pairwise-distances: batches taller and wider than the samples, rows
several units from the origin (where the expansion |a|^2 + |b|^2 - 2 a.b loses digits)
and a repeated row (an exact zero off the diagonal). The properties no single output
can show (symmetry, sizes 1 to 33, reordering, translation, no negative entry) are
tests.py's."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, b, d, offset=0.0, repeat=False, sample=False):
    rng = np.random.default_rng(31000 + draw)
    x = rng.normal(size=(b, d))
    if offset:
        x += rng.uniform(offset, 2 * offset, size=(1, d)) * rng.choice([-1.0, 1.0], size=(1, d))
    if repeat:
        i, j = rng.choice(b, size=2, replace=False)
        x[j] = x[i]
    return Case(name, sample=sample, args={"x": x.astype(np.float32)})


def cases(seed):
    fresh = 100 * (seed + 1)
    # Samples: the same for every seed.
    yield _case("three-points", draw=0, b=3, d=2, sample=True)
    yield _case("four-points", draw=1, b=4, d=3, sample=True, repeat=True)
    # Hidden: fresh points for every seed.
    yield _case("tall", draw=2 + fresh, b=12, d=4)
    yield _case("tall-far", draw=3 + fresh, b=12, d=4, offset=4.0, repeat=True)
    yield _case("wide", draw=4 + fresh, b=5, d=9)
    yield _case("wide-far", draw=5 + fresh, b=5, d=9, offset=4.0)
    yield _case("wide-repeated", draw=6 + fresh, b=5, d=9, repeat=True)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "away-from-the-origin": lambda args: float(np.abs(args["x"].mean(axis=0)).min()) > 2.0,
        "repeated-rows": lambda args: len(np.unique(args["x"], axis=0)) < len(args["x"]),
        "more-rows-than-features": lambda args: args["x"].shape[0] > args["x"].shape[1],
        "fewer-rows-than-features": lambda args: args["x"].shape[0] < args["x"].shape[1],
    }
