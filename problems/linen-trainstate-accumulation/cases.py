"""Cases for linen-trainstate-accumulation: targets with a clear signal and an
offset, so a broadcast (M, M) loss and a missed rebind are far from correct."""

import numpy as np

from grader.cases import Case

# The model seeds of the hidden shape groups: whole numbers, so static (a program
# per value), and the same in every variant; each variant draws fresh data. A seed
# new per variant made the reference and every mistake compile a program per
# variant (docs/authoring.md "Static arguments").
SEED_WIDE = 104
SEED_LONG = 102


def _case(name, *, seed, m, d, lr, draw=None, sample=False):
    rng = np.random.default_rng(2000 + 31 * (seed if draw is None else draw) + m + d)
    w_true = rng.normal(size=(d,))
    x = rng.normal(size=(2, m, d))
    y = x @ w_true + np.array([[1.0], [-1.0]]) + 0.1 * rng.normal(size=(2, m))
    return Case(
        name,
        sample=sample,
        args={
            "seed": float(seed),
            "x_batches": x.astype(np.float32),
            "y_batches": y.astype(np.float32),
            "lr": float(lr),
        },
    )


def cases(seed):
    # Samples are fixed; every hidden case draws fresh data in each variant
    # (see docs/authoring.md "Hidden inputs change between submissions").
    fresh = 100 * (seed + 1)
    # Within a hidden shape group the model seed is shared and only the data
    # draw differs, so one compilation serves the group.
    yield _case("small", seed=0, m=4, d=3, lr=0.1, sample=True)
    yield _case("more-features", seed=1, m=6, d=5, lr=0.05, sample=True)
    yield _case("wide", seed=SEED_WIDE, draw=4 + fresh, m=12, d=9, lr=0.1)
    yield _case("wide-big-step", seed=SEED_WIDE, draw=9 + fresh, m=12, d=9, lr=0.3)
    yield _case("long", seed=SEED_LONG, draw=2 + fresh, m=40, d=4, lr=0.2)
    yield _case("long-small-step", seed=SEED_LONG, draw=6 + fresh, m=40, d=4, lr=0.02)


def _fit(args):
    """R^2 of a least-squares line (with intercept) through the whole batch."""
    x = args["x_batches"].reshape(-1, args["x_batches"].shape[-1]).astype(np.float64)
    y = args["y_batches"].reshape(-1).astype(np.float64)
    design = np.c_[x, np.ones(len(y))]
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return 1.0 - float((y - design @ coef).var() / y.var())


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "micro-batches-differ": lambda args: (
            abs(float(args["y_batches"][0].mean() - args["y_batches"][1].mean())) > 1.0
        ),
        "targets-follow-inputs": lambda args: _fit(args) > 0.5,
        "large-step": lambda args: args["lr"] >= 0.1,
    }
