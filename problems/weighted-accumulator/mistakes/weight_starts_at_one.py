"""You start the total weight at 1 (safe from dividing by zero, but every later mean divides by one too many): an empty window weighs 0."""

import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(jnp.zeros_like, params),
        "weight": jnp.ones((), jnp.float32),
        "count": jnp.zeros((), jnp.float32),
    }
