"""Cases for per-example-grads: separable-ish data with margins of both signs, and
inputs scaled up so that some examples are misclassified by hundreds (the literal
log(1 + exp(-y z)) overflows there; softplus does not)."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, b, f, scale=1.0, sample=False):
    rng = np.random.default_rng(15000 + draw)
    w = rng.normal(size=(f,))
    x = scale * rng.normal(size=(b, f))
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
    # Margins z of about 60 * sqrt(7): about half the examples are wrong by over 88.
    yield _case("batch-confident", draw=6 + fresh, b=32, f=6, scale=60.0)
    yield _case("wide", draw=4 + fresh, b=7, f=20)
    yield _case("wide-again", draw=5 + fresh, b=7, f=20)


def _margins(args):
    """y * z for each example, in float64."""
    z = np.asarray(args["x"], np.float64) @ args["w"] + float(args["b"])
    return args["y"] * z


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "both-labels": lambda args: args["y"].min() < 0 < args["y"].max(),
        "margins-of-both-signs": lambda args: _margins(args).min() < 0 < _margins(args).max(),
        "nonzero-bias": lambda args: abs(float(args["b"])) > 0.25,
        "confidently-wrong": lambda args: _margins(args).min() < -100.0,
    }
