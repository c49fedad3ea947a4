"""You divide the sum by the number of micro-batches; the sum is weighted, so divide it by the total weight, acc["weight"]."""

import jax


def average(acc):
    return jax.tree.map(lambda total: total / acc["count"], acc["sum"])
