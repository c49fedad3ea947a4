# expect: wrong_answer
# diagnosis: mean_loss
# why: each chunk's loss is a mean, not a sum: the accumulated gradient is the full gradient divided by the chunk size
import jax
import jax.numpy as jnp
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)
    xs = x_full.reshape(n, -1)
    ys = y_full.reshape(n, -1)

    def body(acc, chunk):
        x, y = chunk
        g = jax.grad(lambda w: jnp.mean((w * x - y) ** 2))(w)
        return acc + g, None

    total, _ = lax.scan(body, jnp.zeros(()), (xs, ys))
    return total
