# expect: wrong_answer
# diagnosis: none
# why: draws each kernel as (out, in), PyTorch's layout, and transposes it: the right shape and scale, other numbers
import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    keys = jax.random.split(jax.random.key(int(seed)), 3)
    sizes = [x.shape[1], 16, 8, 1]
    params = {}
    for i in range(3):
        a, b = sizes[i], sizes[i + 1]
        w = jax.random.normal(keys[i], (b, a)) * jnp.sqrt(2.0 / a)
        params[f"layer_{i}"] = {"w": w.T, "b": jnp.zeros(b)}
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        if i < 2:
            h = jax.nn.relu(h)
    return params, h[:, 0]
