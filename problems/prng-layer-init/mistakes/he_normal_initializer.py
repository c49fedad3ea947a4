"""You use jax.nn.initializers.he_normal, which draws from a truncated normal; the statement's weights are jax.random.normal(keys[i], (a, b)) * sqrt(2 / a), an untruncated normal."""

import itertools

import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    sizes = [x.shape[1], 16, 8, 1]
    keys = jax.random.split(jax.random.key(int(seed)), 3)
    params = {
        f"layer_{i}": {
            "w": jax.nn.initializers.he_normal()(keys[i], (a, b)),
            "b": jnp.zeros(b),
        }
        for i, (a, b) in enumerate(itertools.pairwise(sizes))
    }
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        h = jax.nn.relu(h) if i < 2 else h
    return params, h[:, 0]
