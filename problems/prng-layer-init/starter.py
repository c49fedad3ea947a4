import itertools

import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    key = jax.random.key(int(seed))
    sizes = [x.shape[1], 16, 8, 1]
    params = {}
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        # TODO: one key per layer, split from `key`; this draws every layer from the same key.
        params[f"layer_{i}"] = {
            "w": jax.random.normal(key, (a, b)) * jnp.sqrt(2.0 / a),
            "b": jnp.zeros(b),
        }
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        if i < 2:
            h = jax.nn.relu(h)
    return params, h[:, 0]
