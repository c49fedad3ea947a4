"""You replace the running sum with each micro-batch's gradient, so only the last one is left: add it to the carry instead."""

import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m, n = int(micro_batch_size), x_full.shape[0]
    xs = x_full.reshape(-1, m, x_full.shape[-1])
    ys = y_full.reshape(-1, m)

    def micro_loss(w, x, y):
        return jnp.sum((jnp.tanh(x @ w) - y) ** 2) / n

    def step(acc, batch):
        return jax.grad(micro_loss)(w, *batch), None

    return jax.lax.scan(step, jnp.zeros_like(w), (xs, ys))[0]
