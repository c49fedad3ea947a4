# expect: wrong_answer
# diagnosis: none
# why: returns scan's stacked per-step outputs (each chunk's gradient, shape (n_microbatches,)) instead of the final carry
import jax
import jax.numpy as jnp
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)
    xs = x_full.reshape(n, -1)
    ys = y_full.reshape(n, -1)

    def body(acc, chunk):
        x, y = chunk
        g = jax.grad(lambda w: jnp.sum((w * x - y) ** 2))(w)
        return acc + g, g

    _, per_chunk = lax.scan(body, jnp.zeros(()), (xs, ys))
    return per_chunk
