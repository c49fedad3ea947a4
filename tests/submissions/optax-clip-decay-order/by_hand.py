# expect: accepted
# why: no Optax: the global norm from tree_leaves, the factor applied with tree_map, decay and step in one expression
import jax
import jax.numpy as jnp


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
    factor = jnp.where(norm > max_norm, max_norm / norm, 1.0)
    return jax.tree_util.tree_map(
        lambda p, g: p - learning_rate * (factor * g + weight_decay * p), params, grads
    )
