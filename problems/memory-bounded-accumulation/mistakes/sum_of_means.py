"""You add up micro-batch means: that is N / m times the full batch's mean; divide each micro-batch's sum by the full batch size N."""

import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m = int(micro_batch_size)
    xs = x_full.reshape(-1, m, x_full.shape[-1])
    ys = y_full.reshape(-1, m)

    def micro_loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

    def step(acc, batch):
        return acc + jax.grad(micro_loss)(w, *batch), None

    return jax.lax.scan(step, jnp.zeros_like(w), (xs, ys))[0]
