# expect: accepted
# why: mean gradient per micro-batch weighted by its share of the real examples, n_k / N: the same weighting written the other way
import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    n_total = mask.sum()
    acc = jnp.zeros_like(w)
    for x, y, m in zip(xs, ys, mask):
        n = m.sum()
        g = jax.grad(lambda w: jnp.sum(m * (x @ w - y) ** 2) / n)(w)
        acc = acc + (n / n_total) * g
    return acc
