"""Your hand-written gradient leaves out tanh's derivative: by the chain rule each residual is multiplied by 1 - tanh(x . w)**2 (or let jax.grad differentiate the micro-batch's loss)."""

import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m, n = int(micro_batch_size), x_full.shape[0]
    xs = x_full.reshape(-1, m, x_full.shape[-1])
    ys = y_full.reshape(-1, m)

    def step(acc, batch):
        x, y = batch
        return acc + 2.0 * x.T @ (jnp.tanh(x @ w) - y) / n, None

    total, _ = jax.lax.scan(step, jnp.zeros_like(w), (xs, ys))
    return total
