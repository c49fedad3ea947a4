"""Your hand-derived gradient drops the factor 2 from d/dw (w*x - y)**2 = 2*(w*x - y)*x."""

import jax.numpy as jnp
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)

    def step(acc, chunk):
        x, y = chunk
        return acc + jnp.sum((w * x - y) * x), None

    total, _ = lax.scan(step, jnp.zeros(()), (x_full.reshape(n, -1), y_full.reshape(n, -1)))
    return total
