"""You draw a mask of shape (F,), so every row of a micro-batch drops the same inputs: draw one of shape (M, F), a keep-or-drop for each input of each row."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    keys = jax.random.split(jax.random.key(int(seed)), xs.shape[0])

    def micro_grad(k, x, y):
        keep = jax.random.bernoulli(k, 1 - rate, w.shape)
        dropped = jnp.where(keep, x / (1 - rate), 0.0)
        return jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w)

    return jax.vmap(micro_grad)(keys, xs, ys).mean(axis=0)
