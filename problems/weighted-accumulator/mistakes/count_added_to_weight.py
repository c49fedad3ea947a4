"""You add 1 to the total weight for each micro-batch, so it counts micro-batches: add the micro-batch's weight to the total weight (1 only to count)."""

import jax


def accumulate(acc, grads, weight):
    return {
        "sum": jax.tree.map(lambda total, g: total + weight * g, acc["sum"], grads),
        "weight": acc["weight"] + 1.0,
        "count": acc["count"] + 1.0,
    }
