# expect: wrong_answer
# diagnosis: none
# cases: three-points=accepted four-points=accepted tall=accepted tall-far=accepted wide=accepted wide-far=accepted wide-repeated=accepted
# why: the expansion with einsum and no clamp: every case is within tolerance, but equal rows far from the origin come out negative and the hidden test of non-negative entries fails (no diagnosis: known mistakes are matched by their outputs on the cases, which this one shares with the reference)
import jax.numpy as jnp


def pairwise_sq_dists(x):
    sq = jnp.einsum("bd,bd->b", x, x)
    return sq[:, None] + sq[None, :] - 2.0 * jnp.einsum("id,jd->ij", x, x)
