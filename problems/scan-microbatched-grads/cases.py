"""Cases for scan-microbatched-grads. The hidden cases use a non-zero b (which
must be ignored), several chunk counts, and w far from the best fit so the
gradient is large compared with rounding."""

import numpy as np

from grader.cases import Case


def _case(name, *, n, chunks, w, b, seed, sample=False):
    rng = np.random.default_rng(3000 + seed)
    x = rng.normal(size=(n,))
    y = 0.7 * x + 0.3 * rng.normal(size=(n,))
    return Case(
        name,
        sample=sample,
        args={
            "w": float(w),
            "b": float(b),
            "x_full": x.astype(np.float32),
            "y_full": y.astype(np.float32),
            "n_microbatches": float(chunks),
        },
    )


def cases(seed):
    # Samples are fixed; every hidden case draws fresh data for each seed
    # (one seed per variant, see docs/authoring.md "Hidden inputs change between submissions").
    fresh = 100 * (seed + 1)
    yield _case("tiny", n=8, chunks=2, w=1.5, b=0.0, seed=0, sample=True)
    yield _case("four-chunks", n=12, chunks=4, w=-0.5, b=0.0, seed=1, sample=True)
    # Integral-valued floats are compiled as constants (grader/child/run.py), so the
    # hidden w and b are not whole numbers: a pair of cases then shares one compile.
    yield _case("many-chunks", n=96, chunks=8, w=2.25, b=0.75, seed=2 + fresh)
    yield _case("many-chunks-negative-w", n=96, chunks=8, w=-1.25, b=-1.75, seed=3 + fresh)
    yield _case("few-large-chunks", n=240, chunks=3, w=0.1, b=1.5, seed=4 + fresh)
    yield _case("few-large-chunks-steep", n=240, chunks=3, w=3.25, b=0.5, seed=5 + fresh)


def _fit(args):
    """The least-squares w for y on x, in float64."""
    x, y = (np.asarray(args[k], np.float64) for k in ("x_full", "y_full"))
    return float(x @ y / (x @ x))


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "nonzero-bias": lambda args: args["b"] != 0.0,
        "three-or-more-chunks": lambda args: args["n_microbatches"] >= 3,
        "w-far-from-fit": lambda args: abs(args["w"] - _fit(args)) > 0.5,
    }
