# attack: numbers that fool comparisons
# expect: wrong_answer
# effect: none
# why: an empty array, which np.allclose accepts against anything broadcastable
import jax.numpy as jnp
def solve(x, scale):
    return jnp.zeros((0,))
