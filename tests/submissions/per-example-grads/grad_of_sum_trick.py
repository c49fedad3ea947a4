# expect: accepted
# why: one gradient of the summed loss with respect to per-example copies of the parameters equals the per-example gradients
import jax
import jax.numpy as jnp


def per_example_grads(w, b, x, y):
    ws = jnp.broadcast_to(w, x.shape)
    bs = jnp.broadcast_to(b, y.shape)

    def total(ws, bs):
        return jnp.sum(jax.nn.softplus(-y * (jnp.sum(ws * x, axis=1) + bs)))

    return jax.grad(total, argnums=(0, 1))(ws, bs)
