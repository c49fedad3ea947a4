import jax.numpy as jnp


def pairwise_sq_dists(x):
    diff = x[:, None, :] - x[None, :, :]
    return jnp.sum(diff * diff, axis=-1)
