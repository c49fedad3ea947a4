# attack: feedback as an oracle
# expect: wrong_answer
# effect: leak
# why: returns zeros so that each hidden case's max_abs_error would equal the expected values' size (the test checks that a hidden case shows no magnitude)
import jax.numpy as jnp
def solve(x, scale):
    return jnp.zeros_like(x)
