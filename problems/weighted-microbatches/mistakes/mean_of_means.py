"""You average the micro-batches' mean gradients, so a short micro-batch weighs as much as a full one: sum masked sums and divide by the number of real examples once."""

import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    def micro_loss(w, x, y, m):
        return jnp.sum(m * (x @ w - y) ** 2) / jnp.sum(m)

    def step(acc, batch):
        return acc + jax.grad(micro_loss)(w, *batch), None

    total, _ = jax.lax.scan(step, jnp.zeros_like(w), (xs, ys, mask))
    return total / mask.shape[0]
