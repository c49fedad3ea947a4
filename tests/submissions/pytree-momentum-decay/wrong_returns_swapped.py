# expect: wrong_answer
# diagnosis: none
# why: the right update, returned as (new_velocity, new_params) instead of (new_params, new_velocity)
import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)

    def step(path, p, v):
        if path[-1].key == "w":
            return p - learning_rate * (v + weight_decay * p)
        return p - learning_rate * v

    new_params = jax.tree_util.tree_map_with_path(step, params, new_velocity)
    return new_velocity, new_params
