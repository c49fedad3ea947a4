# expect: wrong_answer
# diagnosis: padded_size
# why: masks the padding out of the sum but divides by K * M, every row padding included, instead of the N real rows
import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    def micro_loss(w, x, y, m):
        return jnp.sum(m * (x @ w - y) ** 2)

    total = jnp.zeros_like(w)
    for x, y, m in zip(xs, ys, mask, strict=True):
        total = total + jax.grad(micro_loss)(w, x, y, m)
    return total / mask.size
