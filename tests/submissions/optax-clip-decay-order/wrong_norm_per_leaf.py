# expect: wrong_answer
# diagnosis: per_leaf_norm
# why: by hand, each leaf is clipped by its own norm instead of the global norm of every leaf together
import jax
import jax.numpy as jnp


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    def step(p, g):
        norm = jnp.sqrt(jnp.sum(g**2))
        g = g * jnp.minimum(1.0, max_norm / norm)
        return p - learning_rate * (g + weight_decay * p)

    return jax.tree_util.tree_map(step, params, grads)
