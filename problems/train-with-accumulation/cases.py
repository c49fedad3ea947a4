"""Cases for train-with-accumulation. Every case has a short last micro-batch
and a short last window; max_grad_norm sits between typical window gradient
norms so clipping is active on some updates and idle on others, and in one case
per variant it is above any gradient's norm (clipping never acts)."""

import numpy as np

from grader.cases import Case

# The model seeds of the hidden shape groups: whole numbers, so static (a program
# per value), and the same in every variant; each variant draws fresh data. A seed
# new per variant made the reference and every mistake compile a program per
# variant (docs/authoring.md "Static arguments").
SEED_RAGGED = 102
SEED_LONG = 104


def _case(name, *, seed, n, d, classes, micro, steps, lr, clip, draw=None, sample=False):
    rng = np.random.default_rng(5000 + 7 * (seed if draw is None else draw) + n)
    centers = 2.0 * rng.normal(size=(classes, d))
    labels = rng.integers(0, classes, size=n)
    x = centers[labels] + rng.normal(size=(n, d))
    return Case(
        name,
        sample=sample,
        args={
            "seed": float(seed),
            "x": x.astype(np.float32),
            "y": labels.astype(np.float32),
            "n_classes": float(classes),
            "micro_batch_size": float(micro),
            "accumulation_steps": float(steps),
            "lr": float(lr),
            "max_grad_norm": float(clip),
        },
    )


def cases(seed):
    # Samples are fixed; every hidden case draws fresh data in each variant
    # (see docs/authoring.md "Hidden inputs change between submissions").
    fresh = 100 * (seed + 1)
    yield _case(
        "ten-examples",
        seed=0,
        n=10,
        d=3,
        classes=3,
        micro=4,
        steps=2,
        lr=0.5,
        clip=1.0,
        sample=True,
    )
    yield _case(
        "three-windows",
        seed=1,
        n=22,
        d=4,
        classes=3,
        micro=4,
        steps=2,
        lr=0.3,
        clip=2.0,
        sample=True,
    )
    # Within a hidden shape group the model seed is shared and only the data draw
    # and the (traced) learning rate and clip differ, so one compilation serves the
    # group; integral-valued floats would be static, hence clip=40.5, not 40.
    # Hidden: 50 rows in micro-batches of 8 (last has 2), windows of 3 (last has 1 micro-batch).
    yield _case(
        "ragged",
        seed=SEED_RAGGED,
        draw=2 + fresh,
        n=50,
        d=6,
        classes=4,
        micro=8,
        steps=3,
        lr=0.4,
        clip=1.5,
    )
    yield _case(
        "ragged-tight-clip",
        seed=SEED_RAGGED,
        draw=3 + fresh,
        n=50,
        d=6,
        classes=4,
        micro=8,
        steps=3,
        lr=0.4,
        clip=0.5,
    )
    # Hidden: 57 rows in micro-batches of 6 (last has 3), windows of 4 (last has 2 micro-batches).
    yield _case(
        "long-windows",
        seed=SEED_LONG,
        draw=4 + fresh,
        n=57,
        d=5,
        classes=5,
        micro=6,
        steps=4,
        lr=0.6,
        clip=2.5,
    )
    yield _case(
        "long-windows-loose-clip",
        seed=SEED_LONG,
        draw=5 + fresh,
        n=57,
        d=5,
        classes=5,
        micro=6,
        steps=4,
        lr=0.2,
        clip=40.5,
    )


def _micro_batches(args):
    return -(-args["x"].shape[0] // int(args["micro_batch_size"]))


def _first_window_norm_at_zero(args):
    """The first window's gradient norm for a model of zero weights (uniform
    predictions), in float64: a stand-in for the initial model's."""
    window = int(args["micro_batch_size"] * args["accumulation_steps"])
    x = np.asarray(args["x"][:window], np.float64)
    onehot = np.eye(int(args["n_classes"]))[args["y"][:window].astype(int)]
    residual = 1.0 / onehot.shape[1] - onehot
    kernel, bias = x.T @ residual / len(x), residual.mean(axis=0)
    return float(np.sqrt((kernel**2).sum() + (bias**2).sum()))


def _gradient_norm_bound(args):
    """No window's gradient norm exceeds this, whatever the weights: an example's
    cross-entropy gradient is (p - onehot) times (x, 1), and |p - onehot| <= sqrt 2."""
    x = np.asarray(args["x"], np.float64)
    return float(np.sqrt(2.0) * np.sqrt(1.0 + (x**2).sum(axis=1)).max())


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "short-last-micro-batch": lambda args: (
            args["x"].shape[0] % int(args["micro_batch_size"]) != 0
        ),
        "short-last-window": lambda args: (
            _micro_batches(args) % int(args["accumulation_steps"]) != 0
        ),
        "clipping-active": lambda args: (
            args["max_grad_norm"] < 0.5 * _first_window_norm_at_zero(args)
        ),
        "clipping-idle": lambda args: args["max_grad_norm"] > _gradient_norm_bound(args),
    }
