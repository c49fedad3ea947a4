# expect: wrong_answer
# diagnosis: none
# why: by hand, the global norm is left squared (the sum of squares, no square root)
import jax
import jax.numpy as jnp


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    leaves = jax.tree_util.tree_leaves(grads)
    norm = sum(jnp.sum(g * g) for g in leaves)
    factor = jnp.minimum(1.0, max_norm / norm)
    return jax.tree_util.tree_map(
        lambda p, g: p - learning_rate * (g * factor + weight_decay * p), params, grads
    )
