# expect: accepted
# why: the float16 casts spelled with lax.convert_element_type, the loss scale multiplied before the mean, the finite test on the float16 gradient itself
import jax
import jax.numpy as jnp
from jax import lax


def loss_scaled_step(w, x, y, loss_scale, learning_rate):
    def scaled_loss(w):
        h = jnp.float16
        xs, ws, ys = (lax.convert_element_type(a, h) for a in (x, w, y))
        return jnp.mean(jnp.asarray(loss_scale, h) * (xs @ ws - ys) ** 2)

    g16 = jax.grad(scaled_loss)(w)
    finite = jnp.isfinite(g16).all()
    g = g16.astype(jnp.float32) / jnp.float32(loss_scale)
    w_new = jnp.where(finite, w - learning_rate * g, w)
    scale = jnp.where(finite, jnp.float32(loss_scale), jnp.float32(loss_scale) / 2)
    return w_new, scale, jnp.where(finite, 1.0, 0.0).astype(jnp.float32)
