"""Cases for data-parallel-accumulation: 4 devices (the CPU children's simulated
devices), K micro-batches each, data that differs from device to device."""

import numpy as np

from grader.cases import Case

DEVICES = 4


def _case(name, *, draw, k, m, f, sample=False):
    rng = np.random.default_rng(21000 + draw)
    shift = rng.normal(size=(DEVICES, 1, 1, f))  # each device's shard has its own mean
    xs = shift + rng.normal(size=(DEVICES, k, m, f))
    return Case(
        name,
        sample=sample,
        args={
            "w": rng.normal(size=(f,)).astype(np.float32),
            "xs": xs.astype(np.float32),
            "ys": rng.normal(size=(DEVICES, k, m)).astype(np.float32),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-micro-batches", draw=0, k=2, m=3, f=2, sample=True)
    yield _case("three-micro-batches", draw=1, k=3, m=2, f=3, sample=True)
    yield _case("window", draw=2 + fresh, k=4, m=8, f=5)
    yield _case("window-again", draw=3 + fresh, k=4, m=8, f=5)
    yield _case("long-window", draw=4 + fresh, k=8, m=4, f=6)
    yield _case("long-window-again", draw=5 + fresh, k=8, m=4, f=6)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "devices-differ": lambda args: (
            float(np.ptp(args["xs"].mean(axis=(1, 2)), axis=0).max()) > 0.5
        ),
        "k-not-device-count": lambda args: args["xs"].shape[1] != args["xs"].shape[0],
        "m-not-k": lambda args: args["xs"].shape[2] != args["xs"].shape[1],
    }
