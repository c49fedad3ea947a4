"""Cases for dropout-per-microbatch: micro-batches of the same shape (so one reused key
gives identical masks), dropout rates large enough that masks matter."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, seed, k, m, f, sample=False):
    rng = np.random.default_rng(18000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "seed": float(seed),
            "w": rng.normal(size=(f,)).astype(np.float32),
            "xs": rng.normal(size=(k, m, f)).astype(np.float32),
            "ys": rng.normal(size=(k, m)).astype(np.float32),
            "rate": float(rng.uniform(0.2, 0.5)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    # The key's seed is static (a whole number): one per shape group, new per variant.
    group_a, group_b = 1000 + 2 * seed, 1001 + 2 * seed
    yield _case("two-micro-batches", draw=0, seed=0, k=2, m=3, f=4, sample=True)
    yield _case("three-micro-batches", draw=1, seed=7, k=3, m=2, f=3, sample=True)
    yield _case("four", draw=2 + fresh, seed=group_a, k=4, m=8, f=6)
    yield _case("four-again", draw=3 + fresh, seed=group_a, k=4, m=8, f=6)
    yield _case("many", draw=4 + fresh, seed=group_b, k=8, m=4, f=10)
    yield _case("many-again", draw=5 + fresh, seed=group_b, k=8, m=4, f=10)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "several-micro-batches": lambda args: args["xs"].shape[0] >= 2,
        "several-rows": lambda args: args["xs"].shape[1] >= 2,
        "rate-away-from-half": lambda args: abs(args["rate"] - 0.5) > 0.05,
    }
