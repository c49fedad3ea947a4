"""You use one key for every micro-batch, so they all drop the same units: split the key into K, one per micro-batch."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    keys = jnp.stack([jax.random.key_data(key)] * xs.shape[0])
    keys = jax.random.wrap_key_data(keys)

    def micro_grad(k, x, y):
        keep = jax.random.bernoulli(k, 1 - rate, x.shape)
        dropped = jnp.where(keep, x / (1 - rate), 0.0)
        return jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w)

    return jax.vmap(micro_grad)(keys, xs, ys).mean(axis=0)
