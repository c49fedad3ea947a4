# attack: resource: memory
# expect: memory_limit_exceeded|runtime_error
# effect: none
# why: asks XLA for a 64 GB buffer and needs it whole (np.asarray: compiled, XLA would fuse the fill into the sum and never allocate)
import jax.numpy as jnp
import numpy as np


def solve(x, scale):
    return float(np.asarray(jnp.ones((2**34,), jnp.float32)).sum()) * x
