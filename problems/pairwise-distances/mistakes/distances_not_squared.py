"""You return the distances themselves; the task asks for squared distances: leave out the square root."""

import jax.numpy as jnp


def pairwise_sq_dists(x):
    diff = x[:, None, :] - x[None, :, :]
    return jnp.sqrt(jnp.sum(diff**2, axis=-1))
