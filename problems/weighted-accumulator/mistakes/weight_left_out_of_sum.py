"""You add the gradients to the sum without multiplying them by the micro-batch's weight, so every micro-batch counts the same: add weight * grads."""

import jax


def accumulate(acc, grads, weight):
    return {
        "sum": jax.tree.map(lambda total, g: total + g, acc["sum"], grads),
        "weight": acc["weight"] + weight,
        "count": acc["count"] + 1.0,
    }
