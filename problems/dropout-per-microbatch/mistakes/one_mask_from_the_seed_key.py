"""You draw one (K, M, F) mask for the whole batch from the unsplit key: micro-batch i's mask comes from its own key, bernoulli(keys[i], 1 - rate, (M, F)) with keys = split(key, K)."""

import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    keep = jax.random.bernoulli(jax.random.key(int(seed)), 1 - rate, xs.shape)
    dropped = jnp.where(keep, xs / (1 - rate), 0.0)

    def micro_grad(x, y):
        return jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)

    return jax.vmap(micro_grad)(dropped, ys).mean(axis=0)
