# expect: accepted
# why: vmap over the chunks, then a sum; the same gradient, computed in parallel
import jax
import jax.numpy as jnp


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)
    grad_fn = jax.grad(lambda w, x, y: jnp.sum((w * x - y) ** 2))
    per_chunk = jax.vmap(grad_fn, in_axes=(None, 0, 0))(
        jnp.float32(w), x_full.reshape(n, -1), y_full.reshape(n, -1)
    )
    return per_chunk.sum()
