"""You always rescale the gradient to norm max_norm, so small gradients are scaled up; clipping only shrinks: g * min(1, max_norm / norm)."""

import jax
import jax.numpy as jnp


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    norm = jnp.sqrt(sum(jnp.sum(g**2) for g in jax.tree_util.tree_leaves(grads)))
    clipped = jax.tree_util.tree_map(lambda g: g * max_norm / norm, grads)
    return jax.tree_util.tree_map(
        lambda p, g: p - learning_rate * (g + weight_decay * p), params, clipped
    )
