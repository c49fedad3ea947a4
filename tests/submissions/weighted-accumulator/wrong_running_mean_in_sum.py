# expect: wrong_answer
# diagnosis: sum_not_divided
# why: keeps a running weighted mean in "sum" (normalised at every step) and returns it as it is: the mean is right in a chain, but the accumulator's sum is not the weighted sum the statement asks for, and its average returns the accumulator's sum undivided, which is the known mistake sum_not_divided on the average part
import jax
import jax.numpy as jnp


def init_accumulator(params):
    return {
        "sum": jax.tree.map(jnp.zeros_like, params),
        "weight": jnp.zeros(()),
        "count": jnp.zeros(()),
    }


def accumulate(acc, grads, weight):
    total = acc["weight"] + weight
    mean = jax.tree.map(lambda m, g: m + (weight / total) * (g - m), acc["sum"], grads)
    return {"sum": mean, "weight": total, "count": acc["count"] + 1}


def average(acc):
    return acc["sum"]
