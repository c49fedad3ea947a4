"""Cases for optax-clip-decay-order: two- and three-layer trees; gradients mostly
far above max_norm (clipping active), one sample and one hidden case below it."""

import itertools

import numpy as np

from grader.cases import Case


def _tree(rng, sizes, scale):
    return {
        f"dense_{i}": {
            "w": (scale * rng.normal(size=(a, b))).astype(np.float32),
            "b": (scale * rng.normal(size=(b,))).astype(np.float32),
        }
        for i, (a, b) in enumerate(itertools.pairwise(sizes))
    }


def _case(name, *, draw, sizes, grad_scale, sample=False):
    rng = np.random.default_rng(11000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "params": _tree(rng, sizes, 1.0),
            "grads": _tree(rng, sizes, grad_scale),
            "max_norm": float(rng.uniform(0.5, 1.5)),
            "weight_decay": float(rng.uniform(0.05, 0.2)),
            "learning_rate": float(rng.uniform(0.05, 0.3)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("clipped", draw=0, sizes=(3, 4, 2), grad_scale=2.0, sample=True)
    yield _case("not-clipped", draw=1, sizes=(2, 2), grad_scale=0.05, sample=True)
    yield _case("deep", draw=2 + fresh, sizes=(5, 8, 8, 3), grad_scale=3.0)
    yield _case("deep-again", draw=3 + fresh, sizes=(5, 8, 8, 3), grad_scale=1.5)
    yield _case("wide", draw=4 + fresh, sizes=(16, 24, 1), grad_scale=0.8)
    yield _case("wide-again", draw=5 + fresh, sizes=(16, 24, 1), grad_scale=4.0)
    # A global norm of about 0.25, below every max_norm: clipping must leave it alone.
    yield _case("deep-small-gradients", draw=6 + fresh, sizes=(5, 8, 8, 3), grad_scale=0.02)


def _leaves(tree):
    return [leaf for layer in tree.values() for leaf in layer.values()]


def _global_norm(tree):
    """The square root of the sum of squares of every element of every leaf."""
    return float(np.sqrt(sum(np.sum(np.square(leaf, dtype=np.float64)) for leaf in _leaves(tree))))


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "clipping-active": lambda args: _global_norm(args["grads"]) > 1.2 * args["max_norm"],
        "clipping-inactive": lambda args: _global_norm(args["grads"]) < 0.8 * args["max_norm"],
        "several-layers": lambda args: (
            len(args["params"]) >= 2
            and all(set(layer) == {"w", "b"} for layer in args["params"].values())
        ),
    }
