# expect: wrong_answer
# diagnosis: divided_by_count
# why: init and accumulate are right, but the mean divides by how many micro-batches were added (the count), as a plain mean would: per-part credit keeps the first two parts
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
        "weight": acc["weight"] + weight,
        "count": acc["count"] + 1,
    }


def average(acc):
    n = acc["count"]
    return jax.tree.map(lambda s: jnp.divide(s, n), acc["sum"])
