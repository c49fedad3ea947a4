import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(jnp.zeros_like, params),
        "weight": jnp.zeros((), jnp.float32),
        "count": jnp.zeros((), jnp.float32),
    }


def accumulate(acc, grads, weight):
    return {
        "sum": jax.tree.map(lambda total, g: total + weight * g, acc["sum"], grads),
        "weight": acc["weight"] + weight,
        "count": acc["count"] + 1.0,
    }


def average(acc):
    return jax.tree.map(lambda total: total / acc["weight"], acc["sum"])
