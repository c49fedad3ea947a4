# expect: wrong_answer
# diagnosis: chained_splits
# why: the chained pattern key, sub = split(key) per layer: independent keys, but not the keys split(key, 3) the statement fixes
import itertools

import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    key = jax.random.key(int(seed))
    sizes = [x.shape[1], 16, 8, 1]
    params = {}
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        key, sub = jax.random.split(key)
        params[f"layer_{i}"] = {
            "w": jax.random.normal(sub, (a, b)) * jnp.sqrt(2.0 / a),
            "b": jnp.zeros(b),
        }
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        if i < 2:
            h = jax.nn.relu(h)
    return params, h[:, 0]
