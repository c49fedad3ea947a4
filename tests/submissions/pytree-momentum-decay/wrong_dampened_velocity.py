# expect: wrong_answer
# diagnosis: ema_momentum
# why: a moving-average velocity v' = mu v + (1 - mu) g (dampening), not the heavy-ball sum mu v + g
import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(
        lambda v, g: momentum * v + (1 - momentum) * g, velocity, grads
    )

    def step(path, p, v):
        if path[-1].key == "w":
            return p - learning_rate * (v + weight_decay * p)
        return p - learning_rate * v

    return jax.tree_util.tree_map_with_path(step, params, new_velocity), new_velocity
