# expect: wrong_answer
# diagnosis: tanh_derivative_dropped
# why: the gradient by hand without tanh's derivative: 2 (tanh(x w) - y) x, as if the unit were linear
import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m = int(micro_batch_size)
    n = x_full.shape[0]
    xs = x_full.reshape(n // m, m, -1)
    ys = y_full.reshape(n // m, m)

    def body(total, chunk):
        x, y = chunk
        err = jnp.tanh(x @ w) - y
        return total + 2.0 * (err @ x), None

    total, _ = jax.lax.scan(body, jnp.zeros_like(w), (xs, ys))
    return total / n
