"""Cases for loss-scaling-float16: targets far from the predictions make the loss
large, so a large scale overflows float16 (the step is skipped) and a small one does
not; and a loss that overflows once scaled while every gradient stays finite (the
step is taken: the statement decides on the gradients); and a scale at which some
gradients overflow while others fit (one is enough to skip the step)."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, b, f, offset, scale, narrow=0, sample=False):
    """``narrow``: that many last features 50 times smaller, so that their gradients
    fit in float16 where the others' overflow."""
    rng = np.random.default_rng(20000 + draw)
    x = 1.0 + 0.3 * rng.normal(size=(b, f))
    x[:, f - narrow :] *= 0.02
    return Case(
        name,
        sample=sample,
        args={
            "w": (0.05 * rng.normal(size=(f,))).astype(np.float32),
            "x": x.astype(np.float32),
            "y": (offset + 0.2 * rng.normal(size=(b,))).astype(np.float32),
            "loss_scale": float(scale),
            "learning_rate": float(rng.uniform(0.005, 0.02)),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    # The float16 gradient is about 2 * offset * scale: above 65,504 it overflows.
    yield _case("fits", draw=0, b=4, f=3, offset=2.0, scale=64, sample=True)
    yield _case("overflows", draw=1, b=4, f=2, offset=12.0, scale=16384, sample=True)
    yield _case("overflow", draw=2 + fresh, b=32, f=6, offset=14.0, scale=16384)
    yield _case("no-overflow", draw=3 + fresh, b=32, f=6, offset=0.5, scale=16384)
    # Gradients of about 2 * 14 * 16384 overflow; those of the three narrow features,
    # 50 times smaller, do not: one non-finite gradient is enough to skip the step.
    yield _case("overflow-some", draw=8 + fresh, b=32, f=6, offset=14.0, scale=16384, narrow=3)
    yield _case("small-scale", draw=4 + fresh, b=9, f=12, offset=10.0, scale=8)
    yield _case("small-scale-again", draw=5 + fresh, b=9, f=12, offset=4.0, scale=8)
    # A loss of about 64 times 2048 overflows; gradients of about 2 * 8 * 2048 do not.
    yield _case("loss-overflows-only", draw=6 + fresh, b=32, f=4, offset=8.0, scale=2048)
    yield _case("loss-overflows-only-again", draw=7 + fresh, b=32, f=4, offset=8.0, scale=2048)


F16_MAX = 65504.0


def _scaled_gradients(args):
    """The scaled loss and every scaled gradient's size, in float64 (no rounding)."""
    x, w, y = (np.asarray(args[k], np.float64) for k in ("x", "w", "y"))
    residual = x @ w - y
    loss = np.mean(residual**2) * args["loss_scale"]
    grad = (2.0 / len(y)) * (x.T @ residual) * args["loss_scale"]
    return loss, np.abs(grad)


def _scaled(args):
    """The scaled loss and the largest scaled gradient, in float64 (no rounding)."""
    loss, grads = _scaled_gradients(args)
    return loss, float(grads.max())


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        # Comfortably past float16's range, or comfortably inside it (rounding aside).
        "gradients-overflow": lambda args: _scaled(args)[1] > 2 * F16_MAX,
        "gradients-fit": lambda args: _scaled(args)[1] < F16_MAX / 2,
        "loss-overflows-gradients-fit": lambda args: (
            _scaled(args)[0] > 1.5 * F16_MAX and _scaled(args)[1] < 0.75 * F16_MAX
        ),
        "some-gradients-overflow": lambda args: (
            float(_scaled_gradients(args)[1].max()) > 2 * F16_MAX
            and float(_scaled_gradients(args)[1].min()) < F16_MAX / 2
        ),
    }
