"""You replace the sum with this micro-batch's weighted gradients, so only the last micro-batch is kept: add them to the sum the accumulator already holds."""

import jax


def accumulate(acc, grads, weight):
    return {
        "sum": jax.tree.map(lambda g: weight * g, grads),
        "weight": acc["weight"] + weight,
        "count": acc["count"] + 1.0,
    }
