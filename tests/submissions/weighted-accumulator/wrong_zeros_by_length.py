# expect: wrong_answer
# diagnosis: none
# why: the zero tree is built with jnp.zeros(len(p)), right for the biases but one dimension short for every kernel
import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(lambda p: jnp.zeros(len(p)), params),
        "weight": jnp.zeros(()),
        "count": jnp.zeros(()),
    }


def accumulate(acc, grads, weight):
    return {
        "sum": jax.tree.map(lambda s, g: s + weight * g, acc["sum"], grads),
        "weight": acc["weight"] + weight,
        "count": acc["count"] + 1,
    }


def average(acc):
    return jax.tree.map(lambda s: s / acc["weight"], acc["sum"])
