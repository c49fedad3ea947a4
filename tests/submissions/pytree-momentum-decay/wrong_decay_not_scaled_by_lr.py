# expect: wrong_answer
# diagnosis: decay_without_learning_rate
# why: decays kernels by (1 - weight_decay) outside the learning rate: p * (1 - lambda) - eta v' instead of p - eta (v' + lambda p)
import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    new_velocity = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
    new_params = {}
    for name, layer in params.items():
        new_params[name] = {
            "w": layer["w"] * (1 - weight_decay) - learning_rate * new_velocity[name]["w"],
            "b": layer["b"] - learning_rate * new_velocity[name]["b"],
        }
    return new_params, new_velocity
