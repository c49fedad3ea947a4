"""You split the key anew for each micro-batch (key, sub = split(key)), which gives other keys than split(key, K): draw all K keys at once, keys = jax.random.split(key, K), and use keys[i]."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    total = jnp.zeros_like(w)
    for i in range(xs.shape[0]):
        key, sub = jax.random.split(key)
        keep = jax.random.bernoulli(sub, 1 - rate, xs[i].shape)
        x = jnp.where(keep, xs[i] / (1 - rate), 0.0)
        total = total + jax.grad(lambda w: jnp.mean((x @ w - ys[i]) ** 2))(w)
    return total / xs.shape[0]
