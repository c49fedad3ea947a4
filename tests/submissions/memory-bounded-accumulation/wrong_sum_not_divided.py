# expect: wrong_answer
# diagnosis: none
# why: sums each micro-batch's gradient of the summed squared error and never divides by N
import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m = int(micro_batch_size)
    n = x_full.shape[0]
    xs = x_full.reshape(n // m, m, -1)
    ys = y_full.reshape(n // m, m)

    def body(total, chunk):
        x, y = chunk
        g = jax.grad(lambda w: jnp.sum((jnp.tanh(x @ w) - y) ** 2))(w)
        return total + g, None

    total, _ = jax.lax.scan(body, jnp.zeros_like(w), (xs, ys))
    return total
