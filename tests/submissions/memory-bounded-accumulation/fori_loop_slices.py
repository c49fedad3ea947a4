# expect: accepted
# why: lax.fori_loop over micro-batch indices with dynamic slices, value_and_grad inside the body: flat memory, the same gradient
import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m = int(micro_batch_size)
    n = x_full.shape[0]

    def body(i, acc):
        x = jax.lax.dynamic_slice_in_dim(x_full, i * m, m)
        y = jax.lax.dynamic_slice_in_dim(y_full, i * m, m)
        _, g = jax.value_and_grad(lambda w: jnp.sum((jnp.tanh(x @ w) - y) ** 2))(w)
        return acc + g

    return jax.lax.fori_loop(0, n // m, body, jnp.zeros_like(w)) / n
