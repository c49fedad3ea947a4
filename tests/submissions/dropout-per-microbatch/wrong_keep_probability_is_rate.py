# expect: wrong_answer
# diagnosis: keep_probability_swapped
# why: draws keep = bernoulli(key, rate): units are kept with probability rate instead of 1 - rate
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))
    keys = jax.random.split(key, xs.shape[0])
    grads = []
    for i in range(xs.shape[0]):
        keep = jax.random.bernoulli(keys[i], rate, xs[i].shape)
        dropped = jnp.where(keep, xs[i] / (1 - rate), 0.0)
        grads.append(jax.grad(lambda w: jnp.mean((dropped @ w - ys[i]) ** 2))(w))
    return sum(grads) / len(grads)
