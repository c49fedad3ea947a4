# attack: numbers that fool comparisons
# expect: wrong_answer
# effect: none
# why: infinities
import jax.numpy as jnp
def solve(x, scale):
    return jnp.full_like(x, jnp.inf)
