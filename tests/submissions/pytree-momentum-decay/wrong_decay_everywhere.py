# expect: wrong_answer
# diagnosis: decay_on_biases
# cases: two-layers=wrong_answer one-layer=wrong_answer
# why: one tree_map for everything, biases decayed like kernels
import jax


def momentum_step(params, grads, velocity, learning_rate, momentum, weight_decay):
    v = jax.tree_util.tree_map(lambda v, g: g + momentum * v, velocity, grads)
    p = jax.tree_util.tree_map(
        lambda p, v: (1 - learning_rate * weight_decay) * p - learning_rate * v, params, v
    )
    return p, v
