# expect: wrong_answer
# diagnosis: none
# why: weights the gradients twice, once on the way in (weight * grads) and again by adding weight squared to the total, as if the total were a sum of squared weights
import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(jnp.zeros_like, params),
        "weight": jnp.zeros(()),
        "count": jnp.zeros(()),
    }


def accumulate(acc, grads, weight):
    return {
        "sum": jax.tree.map(lambda s, g: s + weight * g, acc["sum"], grads),
        "weight": acc["weight"] + weight**2,
        "count": acc["count"] + 1,
    }


def average(acc):
    return jax.tree.map(lambda s: s / acc["weight"], acc["sum"])
