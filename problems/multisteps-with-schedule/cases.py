"""Cases for multisteps-with-schedule: several windows of micro-step gradients, with
and without a leftover partial window."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, t, f, k, rates=None, sample=False):
    """``rates``: where a hidden case's learning rate and decay rate come from, the
    same in every variant. optax's schedule checks its decay rate while it is traced,
    so solutions compile with their numbers static, a program per value: rates new in
    every variant made the reference and each mistake compile a program per case
    (docs/authoring.md "Static arguments"). The weights and gradients are new in every
    variant."""
    rng = np.random.default_rng(17000 + draw)
    w = rng.normal(size=(f,)).astype(np.float32)
    grads = rng.normal(1.0, 1.0, size=(t, f)).astype(np.float32)
    rate_rng = rng if rates is None else np.random.default_rng(17050 + rates)
    return Case(
        name,
        sample=sample,
        args={
            "w": w,
            "grads": grads,
            "every_k": float(k),
            "init_lr": float(rate_rng.uniform(0.2, 0.5)),
            "decay_rate": float(rate_rng.uniform(0.3, 0.7)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-windows", draw=0, t=4, f=2, k=2, sample=True)
    yield _case("with-leftover", draw=1, t=7, f=3, k=3, sample=True)
    yield _case("four-windows", draw=2 + fresh, rates=2, t=16, f=5, k=4)
    yield _case("four-windows-again", draw=3 + fresh, rates=3, t=16, f=5, k=4)
    yield _case("leftover", draw=4 + fresh, rates=4, t=11, f=6, k=3)
    yield _case("leftover-again", draw=5 + fresh, rates=5, t=11, f=6, k=3)


def _windows(args):
    """The number of micro-steps and k, as integers."""
    return args["grads"].shape[0], round(args["every_k"])


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "partial-window-left": lambda args: _windows(args)[0] % _windows(args)[1] != 0,
        "whole-windows-only": lambda args: _windows(args)[0] % _windows(args)[1] == 0,
        "several-windows": lambda args: _windows(args)[0] // _windows(args)[1] >= 3,
    }
