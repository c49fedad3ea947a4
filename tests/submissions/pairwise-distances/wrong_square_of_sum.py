# expect: wrong_answer
# diagnosis: none
# why: sums the differences over the features and squares the sum, (sum_d (x_id - x_jd))^2, not the sum of the squares
import jax.numpy as jnp


def pairwise_sq_dists(x):
    return jnp.sum(x[:, None, :] - x[None, :, :], axis=-1) ** 2
