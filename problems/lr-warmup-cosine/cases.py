"""Cases for lr-warmup-cosine: every step of short schedules (samples), and a fresh
random subset of steps of longer ones (hidden), past the end included."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, warmup, decay, count, sample=False):
    rng = np.random.default_rng(12000 + draw)
    if sample:
        steps = np.arange(decay + 3)
    else:
        steps = np.sort(rng.choice(int(decay * 1.2), size=count, replace=False))
        steps[:3] = [0, warmup, decay]  # the boundaries, whatever the draw
    return Case(
        name,
        sample=sample,
        args={
            "steps": steps.astype(np.float32),
            "peak_value": float(rng.uniform(1e-3, 3e-3)),
            "warmup_steps": float(warmup),
            "decay_steps": float(decay),
            "end_value": float(rng.uniform(1e-5, 1e-4)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("short", draw=0, warmup=3, decay=10, count=0, sample=True)
    yield _case("longer-warmup", draw=1, warmup=5, decay=8, count=0, sample=True)
    yield _case("thousand-steps", draw=2 + fresh, warmup=100, decay=1000, count=64)
    yield _case("thousand-steps-again", draw=3 + fresh, warmup=100, decay=1000, count=64)
    yield _case("long-warmup", draw=4 + fresh, warmup=240, decay=400, count=40)
    yield _case("long-warmup-again", draw=5 + fresh, warmup=240, decay=400, count=40)


def _any_between(args, low, high):
    """Whether some step lies strictly between ``low`` and ``high``."""
    steps = args["steps"]
    return bool(np.any((steps > low) & (steps < high)))


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "inside-warmup": lambda args: _any_between(args, 0.0, args["warmup_steps"]),
        "inside-decay": lambda args: _any_between(args, args["warmup_steps"], args["decay_steps"]),
        "past-the-end": lambda args: _any_between(args, args["decay_steps"], np.inf),
        "at-the-boundaries": lambda args: (
            {0.0, args["warmup_steps"], args["decay_steps"]} <= set(args["steps"].tolist())
        ),
    }
