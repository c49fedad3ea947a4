"""You step with the velocity from before this step's gradient; update the velocity first, then step with the new one."""

import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    def step(path, p, v):
        decay = weight_decay * p if path[-1].key == "w" else 0.0
        return p - learning_rate * (v + decay)

    new_params = jax.tree_util.tree_map_with_path(step, params, velocity)
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
    return new_params, new_velocity
