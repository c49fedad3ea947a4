"""You clip each leaf by its own norm; the norm is global, over every leaf of the tree together (optax.clip_by_global_norm)."""

import jax
import jax.numpy as jnp


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    def clip(g):
        return g * jnp.minimum(1.0, max_norm / jnp.linalg.norm(g))

    clipped = jax.tree_util.tree_map(clip, grads)
    return jax.tree_util.tree_map(
        lambda p, g: p - learning_rate * (g + weight_decay * p), params, clipped
    )
