# expect: accepted
# why: jax.tree_util spelled out, Python floats for the empty totals, and the mean as the sum times the reciprocal of the weight (one rounding more than a division: within the tolerance)
import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree_util.tree_map(lambda p: jnp.zeros(p.shape, p.dtype), params),
        "weight": 0.0,
        "count": 0.0,
    }


def accumulate(acc, grads, weight):
    new_sum = jax.tree_util.tree_map(lambda s, g: s + g * weight, acc["sum"], grads)
    return {"sum": new_sum, "weight": acc["weight"] + weight, "count": acc["count"] + 1}


def average(acc):
    scale = 1.0 / acc["weight"]
    return jax.tree_util.tree_map(lambda s: s * scale, acc["sum"])
