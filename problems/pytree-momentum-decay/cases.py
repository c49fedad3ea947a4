"""Cases for pytree-momentum-decay: trees of dense layers whose depth and sizes
differ between the samples and the hidden cases; one tree shape per group of hidden
cases (one compilation each), fresh values for every variant."""

import itertools

import numpy as np

from grader.cases import Case


def _tree(rng, sizes, scale=1.0):
    return {
        f"dense_{i}": {
            "w": (scale * rng.normal(size=(a, b))).astype(np.float32),
            "b": (scale * rng.normal(size=(b,))).astype(np.float32),
        }
        for i, (a, b) in enumerate(itertools.pairwise(sizes))
    }


def _case(name, *, draw, sizes, sample=False):
    rng = np.random.default_rng(7000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "params": _tree(rng, sizes),
            "grads": _tree(rng, sizes),
            "velocity": _tree(rng, sizes, scale=0.5),
            "learning_rate": float(rng.uniform(0.05, 0.2)),
            "momentum": float(rng.uniform(0.8, 0.95)),
            "weight_decay": float(rng.uniform(0.05, 0.2)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-layers", draw=0, sizes=(3, 4, 2), sample=True)
    yield _case("one-layer", draw=1, sizes=(5, 3), sample=True)
    yield _case("three-layers", draw=2 + fresh, sizes=(6, 8, 8, 3))
    yield _case("three-layers-again", draw=3 + fresh, sizes=(6, 8, 8, 3))
    yield _case("wide", draw=4 + fresh, sizes=(16, 32, 1))
    yield _case("wide-again", draw=5 + fresh, sizes=(16, 32, 1))


def _leaves(tree):
    return [leaf for layer in tree.values() for leaf in layer.values()]


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "kernels-and-biases": lambda args: any(
            np.ndim(layer.get("w")) == 2 and np.ndim(layer.get("b")) == 1
            for layer in args["params"].values()
        ),
        "nonzero-velocity": lambda args: (
            max(float(np.abs(v).max()) for v in _leaves(args["velocity"])) > 0.1
        ),
        "three-or-more-layers": lambda args: len(args["params"]) >= 3,
    }
