# expect: accepted
# why: the closed form sum(2 (w x - y) x), no scan at all: the result is what is graded
import jax.numpy as jnp


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    return jnp.sum(2.0 * (w * x_full - y_full) * x_full)
