"""You use the expansion without clamping: for equal or nearly equal rows far from the origin, float32 rounding makes some distances negative; take jnp.maximum(..., 0.0)."""

import jax.numpy as jnp


def pairwise_sq_dists(x):
    sq = jnp.sum(x * x, axis=1)
    return sq[:, None] + sq[None, :] - 2.0 * x @ x.T
