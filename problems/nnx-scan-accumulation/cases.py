"""Cases for nnx-scan-accumulation: K micro-batches of an MLP regression."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, k, m, f, sample=False):
    rng = np.random.default_rng(19000 + draw)
    xs = rng.normal(size=(k, m, f))
    ys = np.sin(xs.sum(axis=-1)) + 0.1 * rng.normal(size=(k, m))
    return Case(
        name,
        sample=sample,
        args={
            "xs": xs.astype(np.float32),
            "ys": ys.astype(np.float32),
            "learning_rate": float(rng.uniform(0.05, 0.2)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two", draw=0, k=2, m=4, f=3, sample=True)
    yield _case("three", draw=1, k=3, m=2, f=2, sample=True)
    yield _case("six", draw=2 + fresh, k=6, m=8, f=5)
    yield _case("six-again", draw=3 + fresh, k=6, m=8, f=5)
    yield _case("many-small", draw=4 + fresh, k=12, m=3, f=4)
    yield _case("many-small-again", draw=5 + fresh, k=12, m=3, f=4)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "several-micro-batches": lambda args: args["xs"].shape[0] >= 4,
        "several-rows": lambda args: args["xs"].shape[1] >= 3,
        "count-not-size": lambda args: args["xs"].shape[0] != args["xs"].shape[1],
    }
