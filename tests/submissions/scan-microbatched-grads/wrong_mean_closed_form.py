# expect: wrong_answer
# diagnosis: averaged_chunks
# why: a closed form divided by the number of chunks matches the "averaged" mistake by its numbers
import jax.numpy as jnp


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    return jnp.sum(2.0 * (w * x_full - y_full) * x_full) / n_microbatches
