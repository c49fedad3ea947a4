import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    # TODO: one key per micro-batch, split from `key`; this uses one key for all.
    grads = []
    for x, y in zip(xs, ys, strict=True):
        keep = jax.random.bernoulli(key, 1 - rate, x.shape)
        dropped = jnp.where(keep, x / (1 - rate), 0.0)
        grads.append(jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w))
    return sum(grads) / len(grads)
