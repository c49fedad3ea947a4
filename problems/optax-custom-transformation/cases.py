"""Cases for optax-custom-transformation: a few steps of gradients for two-layer trees;
hidden runs long enough for the warm-up to end, and runs that stay inside it."""

import itertools

import numpy as np

from grader.cases import Case


def _tree(rng, sizes, lead=()):
    return {
        f"dense_{i}": {
            "w": rng.normal(size=(*lead, a, b)).astype(np.float32),
            "b": rng.normal(size=(*lead, b)).astype(np.float32),
        }
        for i, (a, b) in enumerate(itertools.pairwise(sizes))
    }


def _case(name, *, draw, sizes, steps, warmup, sample=False):
    rng = np.random.default_rng(13000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "params": _tree(rng, sizes),
            "grads": _tree(rng, sizes, lead=(steps,)),
            "beta": float(rng.uniform(0.8, 0.95)),
            "warmup_steps": float(warmup),
            "learning_rate": float(rng.uniform(0.01, 0.1)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-steps", draw=0, sizes=(3, 2), steps=2, warmup=3, sample=True)
    yield _case("past-warmup", draw=1, sizes=(2, 3, 1), steps=4, warmup=2, sample=True)
    yield _case("seven-steps", draw=2 + fresh, sizes=(4, 6, 2), steps=7, warmup=5)
    yield _case("seven-steps-again", draw=3 + fresh, sizes=(4, 6, 2), steps=7, warmup=5)
    yield _case("inside-warmup", draw=4 + fresh, sizes=(8, 3), steps=3, warmup=10)
    yield _case("inside-warmup-again", draw=5 + fresh, sizes=(8, 3), steps=3, warmup=10)


def _steps(args):
    """T, the length of the gradients' leading axis."""
    return args["grads"]["dense_0"]["b"].shape[0]


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "warmup-ends": lambda args: _steps(args) > args["warmup_steps"],
        "inside-warmup": lambda args: _steps(args) < args["warmup_steps"],
        "several-steps": lambda args: _steps(args) >= 3,
    }
