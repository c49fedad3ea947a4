# expect: accepted
# why: the standard deviation written out (normal * sqrt(2) / sqrt(fan_in)) and the bias as a zero vector of the layer's width
import math

import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    keys = jax.random.split(jax.random.key(int(seed)), 3)
    dims = [x.shape[-1], 16, 8, 1]
    params = {}
    h = x
    for i in range(3):
        w = math.sqrt(2) * jax.random.normal(keys[i], (dims[i], dims[i + 1])) / math.sqrt(dims[i])
        params[f"layer_{i}"] = {"w": w, "b": jnp.zeros(dims[i + 1])}
        h = h @ w
        if i < 2:
            h = jnp.maximum(h, 0.0)
    return params, h[:, 0]
