# expect: wrong_answer
# diagnosis: finite_if_any
# cases: fits=accepted overflows=accepted overflow=accepted overflow-some=wrong_answer
# why: tests jnp.isfinite(g).any() instead of .all(): a step where only some gradients overflow is taken, with inf in it
import jax
import jax.numpy as jnp


def loss_scaled_step(w, x, y, loss_scale, learning_rate):
    f16 = jnp.float16

    def scaled_loss(w):
        loss = jnp.mean((x.astype(f16) @ w.astype(f16) - y.astype(f16)) ** 2)
        return loss * jnp.asarray(loss_scale, f16)

    g = jax.grad(scaled_loss)(w) / loss_scale
    finite = jnp.isfinite(g).any()
    new_w = jnp.where(finite, w - learning_rate * g, w)
    new_scale = jnp.where(finite, loss_scale, loss_scale / 2)
    return new_w, new_scale.astype(jnp.float32), finite.astype(jnp.float32)
