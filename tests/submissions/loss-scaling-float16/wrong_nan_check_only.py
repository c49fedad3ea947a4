# expect: wrong_answer
# diagnosis: none
# why: tests the gradients with isnan only: an overflow to inf without a nan is taken as a finite step
import jax
import jax.numpy as jnp


def loss_scaled_step(w, x, y, loss_scale, learning_rate):
    f16 = jnp.float16
    def scaled_loss(w):
        loss = jnp.mean((x.astype(f16) @ w.astype(f16) - y.astype(f16)) ** 2)
        return loss * jnp.asarray(loss_scale, f16)

    g = jax.grad(scaled_loss)(w) / loss_scale
    ok = ~jnp.any(jnp.isnan(g))
    new_w = jnp.where(ok, w - learning_rate * g, w)
    new_scale = jnp.where(ok, loss_scale, loss_scale / 2)
    return new_w, jnp.float32(new_scale), ok.astype(jnp.float32)
