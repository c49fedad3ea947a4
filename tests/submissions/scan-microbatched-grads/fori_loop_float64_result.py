# expect: accepted
# why: fori_loop with dynamic slices, returned as a NumPy float64 scalar: dtype differences within tolerance pass
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)
    size = x_full.shape[0] // n
    grad_fn = jax.grad(lambda w, x, y: jnp.sum((w * x - y) ** 2))

    def body(i, acc):
        x = lax.dynamic_slice(x_full, (i * size,), (size,))
        y = lax.dynamic_slice(y_full, (i * size,), (size,))
        return acc + grad_fn(w, x, y)

    return np.float64(lax.fori_loop(0, n, body, jnp.zeros(())))
