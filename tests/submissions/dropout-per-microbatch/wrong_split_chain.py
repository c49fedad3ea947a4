# expect: wrong_answer
# diagnosis: sequential_split
# why: key, sub = split(key) before each micro-batch: fresh keys, but not the keys split(key, K) the statement fixes
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    grads = []
    for x, y in zip(xs, ys, strict=True):
        key, sub = jax.random.split(key)
        keep = jax.random.bernoulli(sub, 1 - rate, x.shape)
        dropped = jnp.where(keep, x / (1 - rate), 0.0)
        grads.append(jax.grad(lambda w: jnp.mean((dropped @ w - y) ** 2))(w))
    return sum(grads) / len(grads)
