# attack: resource: memory
# expect: memory_limit_exceeded|runtime_error
# effect: none
# why: asks XLA for a 64 GB buffer
import jax.numpy as jnp
def solve(x, scale):
    return jnp.ones((2**34,), jnp.float32).sum() * x
