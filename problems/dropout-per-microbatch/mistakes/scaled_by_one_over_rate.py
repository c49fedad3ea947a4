"""You scale the kept inputs by 1 / rate; rate is the fraction dropped, so the kept ones are scaled by 1 / (1 - rate), the inverse of the keep probability."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    keys = jax.random.split(jax.random.key(int(seed)), xs.shape[0])

    def micro_grad(k, x, y):
        keep = jax.random.bernoulli(k, 1 - rate, x.shape)
        dropped = jnp.where(keep, x / rate, 0.0)
        return jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w)

    return jax.vmap(micro_grad)(keys, xs, ys).mean(axis=0)
