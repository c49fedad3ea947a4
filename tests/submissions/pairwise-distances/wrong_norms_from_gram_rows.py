# expect: wrong_answer
# diagnosis: none
# why: takes each row's squared norm as the row sum of the Gram matrix x @ x.T instead of its diagonal
import jax.numpy as jnp


def pairwise_sq_dists(x):
    gram = x @ x.T
    sq = gram.sum(axis=1)
    return jnp.maximum(sq[:, None] + sq[None, :] - 2 * gram, 0.0)
