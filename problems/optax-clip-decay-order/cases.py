"""Cases for optax-clip-decay-order: two- and three-layer trees; gradients mostly
far above max_norm (clipping active), one sample below it."""

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
