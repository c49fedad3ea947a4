import jax
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    # TODO: this averages micro-batch means and counts padding rows as examples.
    def micro_loss(w, x, y):
        return jnp.mean((x @ w - y) ** 2)

    grads = [jax.grad(micro_loss)(w, x, y) for x, y in zip(xs, ys, strict=True)]
    return sum(grads) / len(grads)
