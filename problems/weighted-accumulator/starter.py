import jax
import jax.numpy as jnp


def init_accumulator(params):
    # TODO: an empty window: zeros shaped like params, no weight, no micro-batches yet.
    return {"sum": params, "weight": jnp.ones(()), "count": jnp.zeros(())}


def accumulate(acc, grads, weight):
    # TODO: add weight * grads to the sum leaf by leaf; add weight and 1 to the totals.
    return {"sum": grads, "weight": acc["weight"], "count": acc["count"]}


def average(acc):
    # TODO: the weighted mean: divide the sum by the total weight.
    return jax.tree.map(lambda total: total, acc["sum"])
