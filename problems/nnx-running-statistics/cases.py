"""Cases for nnx-running-statistics: features at different scales and offsets (in some
hidden cases one feature a few thousand times narrower than the rest, whose variance
is far below the 1e-5 added to it), a few training batches and one evaluation batch
drawn from a shifted distribution."""

import numpy as np

from grader.cases import Case

# A batch whose rows nearly coincide in a feature standardises by a tiny deviation:
# correct float32 code then differs from the reference by more than the tolerance
# (Flax's BatchNorm computes E[x^2] - E[x]^2, which cancels). Batches are drawn
# again until every feature's largest |x| is at most this many of its deviations.
MAX_CONDITION = 20.0


def _condition(batches):
    x = batches.astype(np.float64)
    return float((np.abs(x).max(axis=1) / x.std(axis=1)).max())


# A feature this many times narrower than the others has a variance (about 1e-6 at
# most) far under the 1e-5 added to it: 1 / sqrt(var + 1e-5) and 1 / (sqrt(var) + 1e-5)
# then differ by a factor of three or more, where with the others they agree to 2e-5.
TINY = 2e-4


def _case(name, *, draw, t, b, e, d, tiny=False, sample=False):
    rng = np.random.default_rng(14000 + draw)
    scale = rng.uniform(0.5, 3.0, size=(d,))
    offset = rng.uniform(-2.0, 2.0, size=(d,))
    if tiny:  # the last feature: the same shape of data, TINY times smaller
        scale[-1] *= TINY
        offset[-1] *= TINY
    batches = offset + scale * rng.normal(size=(t, b, d))
    while _condition(batches) > MAX_CONDITION:
        batches = offset + scale * rng.normal(size=(t, b, d))
    eval_batch = 0.5 + offset + scale * rng.normal(size=(e, d))
    return Case(
        name,
        sample=sample,
        args={
            "batches": batches.astype(np.float32),
            "eval_batch": eval_batch.astype(np.float32),
            "momentum": float(rng.uniform(0.6, 0.9)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("two-batches", draw=0, t=2, b=4, e=3, d=2, sample=True)
    yield _case("three-batches", draw=1, t=3, b=5, e=2, d=3, sample=True)
    yield _case("many-batches", draw=2 + fresh, t=6, b=16, e=8, d=5)
    yield _case("many-batches-again", draw=3 + fresh, t=6, b=16, e=8, d=5, tiny=True)
    yield _case("small-batches", draw=4 + fresh, t=4, b=3, e=5, d=7)
    yield _case("small-batches-again", draw=5 + fresh, t=4, b=3, e=5, d=7, tiny=True)


def _spread(args):
    """The ratio of the training features' largest to smallest standard deviation,
    and the range of their means."""
    x = args["batches"].reshape(-1, args["batches"].shape[-1]).astype(np.float64)
    std = x.std(axis=0)
    return float(std.max() / std.min()), float(np.ptp(x.mean(axis=0)))


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "several-batches": lambda args: args["batches"].shape[0] >= 3,
        # ddof=1 scales a batch's variance by B / (B - 1): 1.5 for B = 3.
        "small-batches": lambda args: args["batches"].shape[1] <= 4,
        "features-on-different-scales": lambda args: (
            _spread(args)[0] > 1.3 and _spread(args)[1] > 0.8
        ),
        # Some feature's variance under a quarter of the epsilon in every training batch.
        "variance-below-epsilon": lambda args: bool(
            (args["batches"].astype(np.float64).var(axis=1).max(axis=0) < 2.5e-6).any()
        ),
    }
