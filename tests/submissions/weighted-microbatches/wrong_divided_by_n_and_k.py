# expect: wrong_answer
# diagnosis: none
# why: sums the masked gradients and divides by N, then also by the number of micro-batches out of habit
import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    n = jnp.sum(mask)

    def body(total, batch):
        x, y, m = batch
        g = jax.grad(lambda w: jnp.sum(jnp.where(m > 0, (x @ w - y) ** 2, 0.0)))(w)
        return total + g, None

    total, _ = jax.lax.scan(body, jnp.zeros_like(w), (xs, ys, mask))
    return total / n / xs.shape[0]
