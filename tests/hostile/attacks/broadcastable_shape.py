# attack: numbers that fool comparisons
# expect: wrong_answer
# effect: none
# why: one element that np.allclose would broadcast
import jax.numpy as jnp
def solve(x, scale):
    return (x * scale).reshape(-1)[:1]
