import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    # TODO: update every leaf with jax.tree_util.tree_map; decay kernels ("w") only.
    new_velocity = velocity
    new_params = params
    return new_params, new_velocity
