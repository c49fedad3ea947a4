"""You add the squared norms along one axis twice (.T does nothing to a 1-D array): broadcast them as sq[:, None] + sq[None, :]."""

import jax.numpy as jnp


def pairwise_sq_dists(x):
    gram = x @ x.T
    sq = jnp.diag(gram)
    return jnp.maximum(sq + sq.T - 2.0 * gram, 0.0)
