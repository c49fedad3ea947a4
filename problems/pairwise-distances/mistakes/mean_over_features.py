"""You average the squared differences over the features; the squared distance sums them."""

import jax.numpy as jnp


def pairwise_sq_dists(x):
    diff = x[:, None, :] - x[None, :, :]
    return jnp.mean(diff**2, axis=-1)
