"""You split once and reuse the same subkey for every micro-batch: split into K keys, jax.random.split(key, K)."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    _, sub = jax.random.split(jax.random.key(int(seed)))
    keys = jax.random.wrap_key_data(jnp.stack([jax.random.key_data(sub)] * xs.shape[0]))

    def micro_grad(k, x, y):
        keep = jax.random.bernoulli(k, 1 - rate, x.shape)
        dropped = jnp.where(keep, x / (1 - rate), 0.0)
        return jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w)

    return jax.vmap(micro_grad)(keys, xs, ys).mean(axis=0)
