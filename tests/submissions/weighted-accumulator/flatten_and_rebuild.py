# expect: accepted
# why: no tree_map: the trees flattened to lists of leaves, worked on with comprehensions and rebuilt with their treedef
import jax
import jax.numpy as jnp


def init_accumulator(params):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    zeros = [jnp.zeros_like(leaf) for leaf in leaves]
    return {
        "sum": jax.tree_util.tree_unflatten(treedef, zeros),
        "weight": jnp.float32(0.0),
        "count": jnp.float32(0.0),
    }


def accumulate(acc, grads, weight):
    sums, treedef = jax.tree_util.tree_flatten(acc["sum"])
    gs = jax.tree_util.tree_leaves(grads)
    added = [s + jnp.float32(weight) * g for s, g in zip(sums, gs, strict=True)]
    return {
        "sum": jax.tree_util.tree_unflatten(treedef, added),
        "weight": acc["weight"] + jnp.float32(weight),
        "count": acc["count"] + jnp.float32(1.0),
    }


def average(acc):
    sums, treedef = jax.tree_util.tree_flatten(acc["sum"])
    return jax.tree_util.tree_unflatten(treedef, [s / acc["weight"] for s in sums])
