"""Cases for optax-multisteps: small image-like inputs with a learnable label
signal, several k, slices of a size other than k, and learning rates large
enough that one Adam step moves the loss visibly."""

import numpy as np

from grader.cases import Case

# The model seeds of the hidden shape groups: whole numbers, so static (a program
# per value), and the same in every variant; each variant draws fresh data. A seed
# new per variant made the reference and every mistake compile a program per
# variant (docs/authoring.md "Static arguments").
SEED_FOUR = 105
SEED_SIX = 102


def _case(name, *, seed, n, side, k, lr, draw=None, sample=False):
    rng = np.random.default_rng(4000 + 13 * (seed if draw is None else draw) + n)
    x = rng.uniform(size=(n, side, side))
    projection = rng.normal(size=(side * side, 10))
    labels = np.argmax(x.reshape(n, -1) @ projection + 0.5 * rng.normal(size=(n, 10)), axis=1)
    return Case(
        name,
        sample=sample,
        args={
            "seed": float(seed),
            "x": x.astype(np.float32),
            "y": labels.astype(np.float32),
            "k": float(k),
            "lr": float(lr),
        },
    )


def cases(seed):
    # Samples are fixed; every hidden case draws fresh data in each variant
    # (see docs/authoring.md "Hidden inputs change between submissions").
    fresh = 100 * (seed + 1)
    # One image size throughout: the parameter shapes, and so the optimizer's
    # compiled operations, are shared by every case.
    yield _case("three-slices", seed=0, n=9, side=4, k=3, lr=0.01, sample=True)
    yield _case("two-slices", seed=1, n=8, side=4, k=2, lr=0.005, sample=True)
    # Within a hidden group of k the model seed is shared and only the data draw
    # differs, so one compilation serves the group.
    # Slices of 8, not 4: cut into slices of k examples, 32 makes two steps, not one.
    yield _case("four-slices", seed=SEED_FOUR, draw=5 + fresh, n=32, side=4, k=4, lr=0.02)
    yield _case("four-slices-small-lr", seed=SEED_FOUR, draw=8 + fresh, n=32, side=4, k=4, lr=0.003)
    yield _case("six-slices", seed=SEED_SIX, draw=2 + fresh, n=36, side=4, k=6, lr=0.01)
    yield _case("six-slices-large-lr", seed=SEED_SIX, draw=3 + fresh, n=36, side=4, k=6, lr=0.05)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "four-or-more-slices": lambda args: args["k"] >= 4,
        "slice-size-not-k": lambda args: args["x"].shape[0] != args["k"] ** 2,
        "large-learning-rate": lambda args: args["lr"] >= 0.02,
    }
