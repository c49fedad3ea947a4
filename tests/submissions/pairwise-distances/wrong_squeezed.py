# expect: wrong_answer
# diagnosis: none
# cases: three-points=accepted four-points=accepted
# why: right on every case, but squeezes the answer "to tidy the shape": for a single row it returns a scalar, not a (1, 1) table, and the visible test says so
import jax.numpy as jnp


def pairwise_sq_dists(x):
    diff = x[:, None, :] - x[None, :, :]
    return jnp.squeeze(jnp.sum(diff**2, axis=-1))
