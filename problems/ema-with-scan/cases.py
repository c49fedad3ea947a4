"""Cases for ema-with-scan: sequences whose length and width differ between samples
and hidden cases; one (T, D) per group of hidden cases, fresh values per variant."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, t, d, sample=False):
    rng = np.random.default_rng(8000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "xs": rng.normal(2.0, 1.0, size=(t, d)).astype(np.float32),
            "decay": float(rng.uniform(0.6, 0.95)),
            "initial": rng.normal(-1.0, 0.5, size=(d,)).astype(np.float32),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("short", draw=0, t=5, d=3, sample=True)
    yield _case("one-feature", draw=1, t=4, d=1, sample=True)
    yield _case("long", draw=2 + fresh, t=37, d=8)
    yield _case("long-again", draw=3 + fresh, t=37, d=8)
    yield _case("very-long", draw=4 + fresh, t=200, d=2)
    yield _case("very-long-again", draw=5 + fresh, t=200, d=2)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "long-sequence": lambda args: args["xs"].shape[0] >= 30,
        "initial-away-from-data": lambda args: (
            float(np.abs(args["initial"]).max()) > 0.5
            and float(np.abs(args["initial"] - args["xs"][0]).max()) > 0.5
        ),
        "decay-away-from-half": lambda args: abs(args["decay"] - 0.5) > 0.05,
    }
