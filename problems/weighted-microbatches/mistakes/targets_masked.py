"""You mask the targets, not the squared errors: a padding row still predicts x @ w and its error pulls on w; multiply each squared error by the mask."""

import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    def micro_loss(w, x, y, m):
        return jnp.sum((x @ w - m * y) ** 2)

    def step(acc, batch):
        return acc + jax.grad(micro_loss)(w, *batch), None

    total, _ = jax.lax.scan(step, jnp.zeros_like(w), (xs, ys, mask))
    return total / mask.sum()
