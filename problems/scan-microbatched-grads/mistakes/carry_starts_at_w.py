"""You start the scan's carry at w; the carry is the gradient summed so far, so it starts at jnp.zeros(()) and w stays a constant of the body."""

import jax
import jax.numpy as jnp
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)
    grad_fn = jax.grad(lambda w, x, y: jnp.sum((w * x - y) ** 2))

    def step(acc, chunk):
        return acc + grad_fn(w, *chunk), None

    total, _ = lax.scan(
        step, jnp.asarray(w, jnp.float32), (x_full.reshape(n, -1), y_full.reshape(n, -1))
    )
    return total
