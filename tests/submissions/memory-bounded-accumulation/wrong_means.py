# expect: wrong_answer
# diagnosis: sum_of_means
# cases: four-by-two=wrong_answer
# why: a flat-memory scan that adds each micro-batch's mean gradient
import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m = int(micro_batch_size)
    xs, ys = x_full.reshape(-1, m, x_full.shape[-1]), y_full.reshape(-1, m)

    def step(acc, b):
        x, y = b
        return acc + jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w), None

    return jax.lax.scan(step, jnp.zeros_like(w), (xs, ys))[0]
