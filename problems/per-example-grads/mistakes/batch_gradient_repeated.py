"""You take the batch's gradient once and repeat it on every row; vmap the single-example gradient over the batch instead."""

import jax
import jax.numpy as jnp


def per_example_grads(w, b, x, y):
    def batch_loss(w, b):
        return jnp.mean(jax.nn.softplus(-y * (x @ w + b)))

    gw, gb = jax.grad(batch_loss, argnums=(0, 1))(w, b)
    return jnp.broadcast_to(gw, x.shape), jnp.broadcast_to(gb, y.shape)
