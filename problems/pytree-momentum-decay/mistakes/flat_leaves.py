"""You return lists of leaves, not trees: keep the structure of params (tree_map builds it for you, or jax.tree_util.tree_unflatten)."""

import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    leaves_p, _ = jax.tree_util.tree_flatten_with_path(params)
    leaves_g = jax.tree_util.tree_leaves(grads)
    leaves_v = jax.tree_util.tree_leaves(velocity)
    new_params, new_velocity = [], []
    for (path, p), g, v in zip(leaves_p, leaves_g, leaves_v, strict=True):
        v = momentum * v + g
        decay = weight_decay * p if path[-1].key == "w" else 0.0
        new_params.append(p - learning_rate * (v + decay))
        new_velocity.append(v)
    return new_params, new_velocity
