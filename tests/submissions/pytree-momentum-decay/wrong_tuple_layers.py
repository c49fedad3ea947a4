# expect: wrong_answer
# diagnosis: none
# cases: two-layers=wrong_answer
# why: the layers come back as (w, b) tuples instead of dicts: the leaves' paths change, and the verdict names the missing leaf
import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    v = jax.tree_util.tree_map(lambda v, g: momentum * v + g, velocity, grads)
    p = {
        name: (
            layer["w"] - learning_rate * (v[name]["w"] + weight_decay * layer["w"]),
            layer["b"] - learning_rate * v[name]["b"],
        )
        for name, layer in params.items()
    }
    return p, v
