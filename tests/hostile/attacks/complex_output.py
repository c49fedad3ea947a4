# attack: numbers that fool comparisons
# expect: wrong_answer
# effect: none
# why: complex numbers with the right real part
import jax.numpy as jnp
def solve(x, scale):
    return (x * scale).astype(jnp.complex64) + 1j
