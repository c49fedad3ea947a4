# expect: wrong_answer
# diagnosis: old_velocity
# why: the step uses the incoming velocity v instead of the updated v' (the new velocity itself is right)
import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)

    def step(path, p, v):
        decay = weight_decay * p if path[-1].key == "w" else 0.0
        return p - learning_rate * (v + decay)

    new_params = jax.tree_util.tree_map_with_path(step, params, velocity)
    return new_params, new_velocity
