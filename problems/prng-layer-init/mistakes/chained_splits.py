"""You split the key afresh for each layer (key, sub = jax.random.split(key)); those are other keys: split once, keys = jax.random.split(key, 3), and give layer i keys[i]."""

import itertools

import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    sizes = [x.shape[1], 16, 8, 1]
    key = jax.random.key(int(seed))
    keys = []
    for _ in range(3):
        key, sub = jax.random.split(key)
        keys.append(sub)
    params = {
        f"layer_{i}": {
            "w": jax.random.normal(keys[i], (a, b)) * jnp.sqrt(2.0 / a),
            "b": jnp.zeros(b),
        }
        for i, (a, b) in enumerate(itertools.pairwise(sizes))
    }
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        h = jax.nn.relu(h) if i < 2 else h
    return params, h[:, 0]
