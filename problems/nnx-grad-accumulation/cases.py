"""Cases for nnx-grad-accumulation: seeds, shapes and learning rates vary, and
the hidden cases use shapes the samples do not show."""

import numpy as np

from grader.cases import Case

# The model seeds of the hidden shape groups: whole numbers, so static (a program
# per value), and the same in every variant; each variant draws fresh data. A seed
# new per variant made the reference and every mistake compile a program per
# variant (docs/authoring.md "Static arguments").
SEED_WIDE = 107
SEED_TALL = 103


def _case(name, *, seed, m, d_in, d_out, lr, draw=None, sample=False):
    rng = np.random.default_rng(1000 + 17 * (seed if draw is None else draw) + m)
    w_true = rng.normal(size=(d_in, d_out))
    x_a, x_b = (rng.normal(size=(m, d_in)) for _ in range(2))
    # Micro-batches drawn with different offsets so their gradients differ.
    y_a = x_a @ w_true + 0.5 + 0.1 * rng.normal(size=(m, d_out))
    y_b = x_b @ w_true - 0.5 + 0.1 * rng.normal(size=(m, d_out))
    f32 = np.float32
    return Case(
        name,
        sample=sample,
        args={
            "seed": float(seed),
            "x_a": x_a.astype(f32),
            "y_a": y_a.astype(f32),
            "x_b": x_b.astype(f32),
            "y_b": y_b.astype(f32),
            "lr": float(lr),
        },
    )


def cases(seed):
    # Samples are fixed; every hidden case draws fresh data in each variant
    # (see docs/authoring.md "Hidden inputs change between submissions").
    fresh = 100 * (seed + 1)
    # Hidden cases come in two shape groups; within a group the model seed is
    # shared and only the data draw differs, so one compilation serves the group.
    yield _case("small", seed=0, m=4, d_in=3, d_out=2, lr=0.1, sample=True)
    yield _case("single-output", seed=1, m=8, d_in=5, d_out=1, lr=0.05, sample=True)
    yield _case("wide", seed=SEED_WIDE, draw=7 + fresh, m=16, d_in=12, d_out=4, lr=0.2)
    yield _case("wide-tiny-lr", seed=SEED_WIDE, draw=5 + fresh, m=16, d_in=12, d_out=4, lr=0.01)
    yield _case("tall", seed=SEED_TALL, draw=3 + fresh, m=32, d_in=6, d_out=3, lr=0.1)
    yield _case("tall-large-step", seed=SEED_TALL, draw=11 + fresh, m=32, d_in=6, d_out=3, lr=0.3)


def _intercept(x, y):
    """The mean intercept of the least-squares affine fit of y on x."""
    design = np.hstack([x, np.ones((len(x), 1))]).astype(np.float64)
    return float(np.linalg.lstsq(design, y.astype(np.float64), rcond=None)[0][-1].mean())


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "several-outputs": lambda args: args["y_a"].shape[-1] > 1,
        # The offsets are 0.5 and -0.5: fitted intercepts about 1 apart.
        "micro-batches-differ": lambda args: (
            abs(_intercept(args["x_a"], args["y_a"]) - _intercept(args["x_b"], args["y_b"])) > 0.5
        ),
        "other-seeds": lambda args: args["seed"] not in (0.0, 1.0),
    }
