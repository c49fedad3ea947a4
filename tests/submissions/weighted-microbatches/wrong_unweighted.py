# expect: wrong_answer
# diagnosis: mean_of_means
# cases: short-last=wrong_answer uneven=wrong_answer
# why: masks right, but each micro-batch's mean counts the same: the short last micro-batch weighs as much as a full one
import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    def mean_grad(x, y, m):
        return jax.grad(lambda w: jnp.sum(m * (x @ w - y) ** 2) / m.sum())(w)

    return jax.vmap(mean_grad)(xs, ys, mask).mean(axis=0)
