# expect: wrong_answer
# diagnosis: targets_masked
# why: multiplies only the targets by the mask, so a padding row still adds (x . w)^2 to the loss
import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    n = jnp.sum(mask)

    def body(total, batch):
        x, y, m = batch
        g = jax.grad(lambda w: jnp.sum((x @ w - y * m) ** 2))(w)
        return total + g, None

    total, _ = jax.lax.scan(body, jnp.zeros_like(w), (xs, ys, mask))
    return total / n
