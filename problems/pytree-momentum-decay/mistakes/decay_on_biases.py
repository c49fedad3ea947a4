"""You apply weight decay to the biases too: only kernels ("w") decay; use the leaf's path to tell them apart."""

import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = jax.tree_util.tree_map(
        lambda p, v: p - learning_rate * (v + weight_decay * p), params, new_velocity
    )
    return new_params, new_velocity
