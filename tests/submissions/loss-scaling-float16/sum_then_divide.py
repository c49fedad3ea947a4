# expect: accepted
# why: the mean written as a float16 sum divided by B, the scale applied before the division, the skip as lax.cond
import jax
import jax.numpy as jnp


def loss_scaled_step(w, x, y, loss_scale, learning_rate):
    def scaled(w):
        r = x.astype(jnp.float16) @ w.astype(jnp.float16) - y.astype(jnp.float16)
        return jnp.sum(r * r) * jnp.float16(loss_scale) / jnp.float16(x.shape[0])

    g = jax.grad(scaled)(w).astype(jnp.float32) / loss_scale
    ok = jnp.isfinite(g).all()
    return jax.lax.cond(
        ok,
        lambda: (w - learning_rate * g, jnp.float32(loss_scale), jnp.float32(1.0)),
        lambda: (w, jnp.float32(loss_scale / 2), jnp.float32(0.0)),
    )
