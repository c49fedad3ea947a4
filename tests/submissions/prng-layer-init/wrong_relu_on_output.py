# expect: wrong_answer
# diagnosis: relu_on_output
# why: applies relu after the last layer too, so negative outputs become 0 (the parameters are right)
import jax
import jax.numpy as jnp


def init_and_apply(seed, x):
    keys = jax.random.split(jax.random.key(int(seed)), 3)
    sizes = [x.shape[1], 16, 8, 1]
    params = {
        f"layer_{i}": {
            "w": jax.random.normal(keys[i], (sizes[i], sizes[i + 1])) * jnp.sqrt(2.0 / sizes[i]),
            "b": jnp.zeros(sizes[i + 1]),
        }
        for i in range(3)
    }
    h = x
    for i in range(3):
        h = jax.nn.relu(h @ params[f"layer_{i}"]["w"] + params[f"layer_{i}"]["b"])
    return params, h[:, 0]
