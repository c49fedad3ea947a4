"""Cases for multisteps-with-schedule: several windows of micro-step gradients, with
and without a leftover partial window."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, t, f, k, sample=False):
    rng = np.random.default_rng(17000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "w": rng.normal(size=(f,)).astype(np.float32),
            "grads": rng.normal(1.0, 1.0, size=(t, f)).astype(np.float32),
            "every_k": float(k),
            "init_lr": float(rng.uniform(0.2, 0.5)),
            "decay_rate": float(rng.uniform(0.3, 0.7)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-windows", draw=0, t=4, f=2, k=2, sample=True)
    yield _case("with-leftover", draw=1, t=7, f=3, k=3, sample=True)
    yield _case("four-windows", draw=2 + fresh, t=16, f=5, k=4)
    yield _case("four-windows-again", draw=3 + fresh, t=16, f=5, k=4)
    yield _case("leftover", draw=4 + fresh, t=11, f=6, k=3)
    yield _case("leftover-again", draw=5 + fresh, t=11, f=6, k=3)


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
