"""You multiply the new gradients by the accumulator's total weight instead of the micro-batch's own weight (the argument weight)."""

import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(jnp.zeros_like, params),
        "weight": jnp.zeros((), jnp.float32),
        "count": jnp.zeros((), jnp.float32),
    }


def accumulate(acc, grads, weight):
    total_weight = acc["weight"] + weight
    return {
        "sum": jax.tree.map(lambda s, g: s + acc["weight"] * g, acc["sum"], grads),
        "weight": total_weight,
        "count": acc["count"] + 1.0,
    }


def average(acc):
    return jax.tree.map(lambda s: s / acc["weight"], acc["sum"])
