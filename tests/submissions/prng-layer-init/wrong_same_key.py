# expect: wrong_answer
# diagnosis: one_key_for_all
# cases: two-features=wrong_answer
# why: jax.random.key made once and used for every layer's draw
import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    key = jax.random.key(int(seed))
    dims = [x.shape[1], 16, 8, 1]
    params = {
        f"layer_{i}": {
            "w": jax.random.normal(key, (dims[i], dims[i + 1])) * jnp.sqrt(2.0 / dims[i]),
            "b": jnp.zeros(dims[i + 1]),
        }
        for i in range(3)
    }
    h = x
    for i in range(3):
        h = h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"]
        h = jax.nn.relu(h) if i < 2 else h
    return params, h[:, 0]
