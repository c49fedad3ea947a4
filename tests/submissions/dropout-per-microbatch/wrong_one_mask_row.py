# expect: wrong_answer
# diagnosis: mask_shared_by_rows
# why: draws one mask of shape (F,) per micro-batch, so every row of a micro-batch drops the same features
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    keys = jax.random.split(key, xs.shape[0])
    grads = []
    for i in range(xs.shape[0]):
        keep = jax.random.bernoulli(keys[i], 1 - rate, (xs.shape[2],))
        dropped = jnp.where(keep, xs[i] / (1 - rate), 0.0)
        grads.append(jax.grad(lambda w: jnp.mean((dropped @ w - ys[i]) ** 2))(w))
    return sum(grads) / len(grads)
