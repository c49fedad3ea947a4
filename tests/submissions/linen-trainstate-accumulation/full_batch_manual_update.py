# expect: accepted
# why: one full-batch gradient (equal micro-batches) and a hand-written SGD update with tree_map
import flax.linen as nn
import jax
import jax.numpy as jnp


def linen_accumulation_step(seed, x_batches, y_batches, lr):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x_batches[0])
    x = x_batches.reshape(-1, x_batches.shape[-1])
    y = y_batches.reshape(-1)

    def loss(p):
        return jnp.mean((jnp.squeeze(model.apply(p, x), axis=-1) - y) ** 2)

    params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, jax.grad(loss)(params))
    return jnp.atleast_1d(loss(params))
