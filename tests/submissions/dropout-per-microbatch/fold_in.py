# expect: accepted
# why: keys from fold_in(key, i) instead of split(key, K): with this JAX's partitionable Threefry they are the same keys
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    total = jnp.zeros_like(w)
    for i in range(xs.shape[0]):
        keep = jax.random.bernoulli(jax.random.fold_in(key, i), 1 - rate, xs[i].shape)
        x = jnp.where(keep, xs[i] / (1 - rate), 0.0)
        total = total + jax.grad(lambda w: jnp.mean((x @ w - ys[i]) ** 2))(w)
    return total / xs.shape[0]
