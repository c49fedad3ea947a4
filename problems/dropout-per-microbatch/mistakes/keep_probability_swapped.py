"""You keep each input with probability rate; rate is the probability of dropping it: bernoulli(k, 1 - rate, shape)."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    keys = jax.random.split(jax.random.key(int(seed)), xs.shape[0])

    def micro_grad(k, x, y):
        keep = jax.random.bernoulli(k, rate, x.shape)
        dropped = jnp.where(keep, x / (1 - rate), 0.0)
        return jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w)

    return jax.vmap(micro_grad)(keys, xs, ys).mean(axis=0)
