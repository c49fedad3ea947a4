# expect: wrong_answer
# diagnosis: none
# cases: tiny=accepted four-chunks=wrong_answer many-chunks=wrong_answer few-large-chunks=wrong_answer
# why: 2 * sum / n equals the sum only when n is 2: the first sample passes, the rest fail, and it matches no known mistake
import jax.numpy as jnp


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    return 2.0 * jnp.sum(2.0 * (w * x_full - y_full) * x_full) / n_microbatches
