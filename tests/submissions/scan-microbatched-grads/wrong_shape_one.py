# expect: wrong_answer
# diagnosis: none
# cases: tiny=wrong_answer four-chunks=wrong_answer many-chunks=wrong_answer
# why: shape (1,) where a scalar is expected is a shape error, even with the right value
import jax.numpy as jnp


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    return jnp.sum(2.0 * (w * x_full - y_full) * x_full).reshape(1)
