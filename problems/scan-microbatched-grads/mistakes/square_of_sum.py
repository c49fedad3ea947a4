"""You square the chunk's summed residual, jnp.sum(w * x - y) ** 2; the loss sums each example's squared residual: jnp.sum((w * x - y) ** 2)."""

import jax
import jax.numpy as jnp
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)
    grad_fn = jax.grad(lambda w, x, y: jnp.sum(w * x - y) ** 2)

    def step(acc, chunk):
        return acc + grad_fn(w, *chunk), None

    total, _ = lax.scan(step, jnp.zeros(()), (x_full.reshape(n, -1), y_full.reshape(n, -1)))
    return total
