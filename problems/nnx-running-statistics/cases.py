"""Cases for nnx-running-statistics: features at different scales and offsets, a few
training batches and one evaluation batch drawn from a shifted distribution."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, t, b, e, d, sample=False):
    rng = np.random.default_rng(14000 + draw)
    scale = rng.uniform(0.5, 3.0, size=(d,))
    offset = rng.uniform(-2.0, 2.0, size=(d,))
    batches = offset + scale * rng.normal(size=(t, b, d))
    eval_batch = 0.5 + offset + scale * rng.normal(size=(e, d))
    return Case(
        name,
        sample=sample,
        args={
            "batches": batches.astype(np.float32),
            "eval_batch": eval_batch.astype(np.float32),
            "momentum": float(rng.uniform(0.6, 0.9)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-batches", draw=0, t=2, b=4, e=3, d=2, sample=True)
    yield _case("three-batches", draw=1, t=3, b=5, e=2, d=3, sample=True)
    yield _case("many-batches", draw=2 + fresh, t=6, b=16, e=8, d=5)
    yield _case("many-batches-again", draw=3 + fresh, t=6, b=16, e=8, d=5)
    yield _case("small-batches", draw=4 + fresh, t=4, b=3, e=5, d=7)
    yield _case("small-batches-again", draw=5 + fresh, t=4, b=3, e=5, d=7)
