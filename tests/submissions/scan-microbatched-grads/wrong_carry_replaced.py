# expect: wrong_answer
# diagnosis: carry_replaced
# why: the body returns the chunk's gradient as the new carry instead of adding it: only the last chunk's gradient is left
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
        return g, g

    last, _ = lax.scan(body, jnp.zeros(()), (xs, ys))
    return last
