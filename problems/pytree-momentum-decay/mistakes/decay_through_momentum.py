"""You add the decay to the gradient, so it goes through the velocity (L2 regularisation); decoupled decay is added to the step only."""

import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    def grad_with_decay(path, g, p):
        return g + weight_decay * p if path[-1].key == "w" else g

    decayed = jax.tree_util.tree_map_with_path(grad_with_decay, grads, params)
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, decayed)
    new_params = jax.tree_util.tree_map(lambda p, v: p - learning_rate * v, params, new_velocity)
    return new_params, new_velocity
