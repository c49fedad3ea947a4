"""You start the sum at ones, so every later sum is off by one in each entry: an empty window holds nothing, jnp.zeros_like for each leaf."""

import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(jnp.ones_like, params),
        "weight": jnp.zeros((), jnp.float32),
        "count": jnp.zeros((), jnp.float32),
    }
