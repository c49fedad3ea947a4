# expect: wrong_answer
# diagnosis: none
# why: differentiates the float16 loss without multiplying it by the scale, then divides by the scale anyway: every step is loss_scale times too short and nothing ever overflows
import jax
import jax.numpy as jnp


def loss_scaled_step(w, x, y, loss_scale, learning_rate):
    f16 = jnp.float16

    def loss16(w):
        return jnp.mean((x.astype(f16) @ w.astype(f16) - y.astype(f16)) ** 2)

    g = jax.grad(loss16)(w) / loss_scale
    finite = jnp.all(jnp.isfinite(g))
    new_w = jnp.where(finite, w - learning_rate * g, w)
    new_scale = jnp.where(finite, loss_scale, loss_scale / 2)
    return new_w, new_scale.astype(jnp.float32), finite.astype(jnp.float32)
