# expect: accepted
# why: a lax.scan over (keys, xs, ys) with the mask drawn inside the body and the gradient by hand; the same keys, the same masks
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    keys = jax.random.split(jax.random.key(int(seed)), xs.shape[0])

    def step(acc, batch):
        k, x, y = batch
        d = x * jax.random.bernoulli(k, 1.0 - rate, x.shape) / (1.0 - rate)
        return acc + 2.0 * d.T @ (d @ w - y) / x.shape[0], None

    total, _ = jax.lax.scan(step, jnp.zeros_like(w), (keys, xs, ys))
    return total / xs.shape[0]
