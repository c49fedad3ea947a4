"""Cases for prng-layer-init: the seed is static (a whole number), shared by the hidden
cases of one input shape and new for every variant; the inputs are fresh too."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, seed, b, f, sample=False):
    rng = np.random.default_rng(22000 + draw)
    return Case(
        name,
        sample=sample,
        args={"seed": float(seed), "x": rng.normal(size=(b, f)).astype(np.float32)},
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    group_a, group_b = 500 + 2 * seed, 501 + 2 * seed
    yield _case("two-features", draw=0, seed=0, b=3, f=2, sample=True)
    yield _case("four-features", draw=1, seed=42, b=2, f=4, sample=True)
    yield _case("wide", draw=2 + fresh, seed=group_a, b=5, f=12)
    yield _case("wide-again", draw=3 + fresh, seed=group_a, b=5, f=12)
    yield _case("batch", draw=4 + fresh, seed=group_b, b=16, f=6)
    yield _case("batch-again", draw=5 + fresh, seed=group_b, b=16, f=6)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "unseen-seed": lambda args: args["seed"] >= 100,
        "more-features-than-examples": lambda args: (
            args["x"].shape[1] > args["x"].shape[0] and args["x"].shape[1] != 16
        ),
        "more-examples-than-features": lambda args: (
            args["x"].shape[0] > args["x"].shape[1] and args["x"].shape[1] != 16
        ),
    }
