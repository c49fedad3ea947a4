# expect: wrong_answer
# diagnosis: not_unscaled
# cases: fits=wrong_answer
# why: overflow handled, but the scaled gradient goes straight into the update
import jax
import jax.numpy as jnp


def loss_scaled_step(w, x, y, loss_scale, learning_rate):
    h = jnp.float16
    g = jax.grad(
        lambda w: jnp.mean((x.astype(h) @ w.astype(h) - y.astype(h)) ** 2) * h(loss_scale)
    )(w)
    ok = jnp.all(jnp.isfinite(g))
    return (
        jnp.where(ok, w - learning_rate * g, w),
        jnp.where(ok, loss_scale, loss_scale / 2).astype(jnp.float32),
        ok.astype(jnp.float32),
    )
