"""Cases for per-example-grads: separable-ish data with margins of both signs."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, b, f, sample=False):
    rng = np.random.default_rng(15000 + draw)
    w = rng.normal(size=(f,))
    x = rng.normal(size=(b, f))
    y = np.where(rng.uniform(size=b) < 0.5, -1.0, 1.0)
    return Case(
        name,
        sample=sample,
        args={
            "w": w.astype(np.float32),
            "b": np.array(rng.normal(), dtype=np.float32),
            "x": x.astype(np.float32),
            "y": y.astype(np.float32),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("three-examples", draw=0, b=3, f=2, sample=True)
    yield _case("five-examples", draw=1, b=5, f=4, sample=True)
    yield _case("batch", draw=2 + fresh, b=32, f=6)
    yield _case("batch-again", draw=3 + fresh, b=32, f=6)
    yield _case("wide", draw=4 + fresh, b=7, f=20)
    yield _case("wide-again", draw=5 + fresh, b=7, f=20)
