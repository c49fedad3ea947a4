# expect: wrong_answer
# diagnosis: fan_out_scale
# why: scales by sqrt(2 / b), the layer's fan-out, instead of sqrt(2 / a), its fan-in
import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    keys = jax.random.split(jax.random.key(int(seed)), 3)
    sizes = [x.shape[1], 16, 8, 1]
    params = {}
    for i in range(3):
        a, b = sizes[i], sizes[i + 1]
        params[f"layer_{i}"] = {
            "w": jax.random.normal(keys[i], (a, b)) * jnp.sqrt(2.0 / b),
            "b": jnp.zeros(b),
        }
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        if i < 2:
            h = jax.nn.relu(h)
    return params, h[:, 0]
