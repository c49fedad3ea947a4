"""You subtract x_i . x_j once; the expansion of |x_i - x_j|^2 is |x_i|^2 + |x_j|^2 - 2 x_i . x_j."""

import jax.numpy as jnp


def pairwise_sq_dists(x):
    sq = jnp.sum(x * x, axis=1)
    return jnp.maximum(sq[:, None] + sq[None, :] - x @ x.T, 0.0)
