"""Your global norm adds up the leaves' norms; it is the square root of the sum of the squares of every element of every leaf (optax.global_norm)."""

import jax
import jax.numpy as jnp


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    norm = sum(jnp.linalg.norm(g) for g in jax.tree_util.tree_leaves(grads))
    factor = jnp.minimum(1.0, max_norm / norm)
    return jax.tree_util.tree_map(
        lambda p, g: p - learning_rate * (factor * g + weight_decay * p), params, grads
    )
