# expect: accepted
# why: centres the batch first (distances do not change), then the expansion with einsum: fewer digits lost far from the origin; clamped all the same
import jax.numpy as jnp


def pairwise_sq_dists(x):
    xc = x - jnp.mean(x, axis=0)
    sq = jnp.einsum("bd,bd->b", xc, xc)
    gram = jnp.einsum("id,jd->ij", xc, xc)
    return jnp.maximum(sq[:, None] + sq[None, :] - 2.0 * gram, 0.0)
