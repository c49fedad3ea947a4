"""Cases for weighted-microbatches: padded micro-batches of very different real
sizes, padding rows full of leftover numbers."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, sizes, m, f, sample=False):
    rng = np.random.default_rng(16000 + draw)
    k = len(sizes)
    xs = rng.normal(size=(k, m, f))
    ys = rng.normal(size=(k, m)) + 3.0  # leftover padding rows are far from zero too
    mask = np.zeros((k, m))
    for i, n in enumerate(sizes):
        mask[i, :n] = 1.0
    return Case(
        name,
        sample=sample,
        args={
            "w": rng.normal(size=(f,)).astype(np.float32),
            "xs": xs.astype(np.float32),
            "ys": ys.astype(np.float32),
            "mask": mask.astype(np.float32),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    rng = np.random.default_rng([seed, 16])
    yield _case("short-last", draw=0, sizes=(4, 4, 1), m=4, f=2, sample=True)
    yield _case("uneven", draw=1, sizes=(1, 3), m=3, f=3, sample=True)
    # Hidden: the real sizes are drawn per variant too (they are values, not shapes).
    yield _case("packed", draw=2 + fresh, sizes=tuple(rng.integers(1, 17, size=6)), m=16, f=5)
    yield _case("packed-again", draw=3 + fresh, sizes=tuple(rng.integers(1, 17, size=6)), m=16, f=5)
    yield _case("one-full", draw=4 + fresh, sizes=(8, *rng.integers(1, 3, size=3)), m=8, f=4)
    yield _case("one-full-again", draw=5 + fresh, sizes=(8, *rng.integers(1, 3, size=3)), m=8, f=4)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "sizes-differ": lambda args: float(np.ptp(args["mask"].sum(axis=1))) > 0,
        "padding-before-the-last": lambda args: float(args["mask"][:-1].min()) == 0.0,
        "padding-holds-numbers": lambda args: bool(
            (args["mask"] == 0).any()
            and np.abs(args["xs"][args["mask"] == 0]).max() > 0.5
            and np.abs(args["ys"][args["mask"] == 0]).max() > 0.5
        ),
    }
