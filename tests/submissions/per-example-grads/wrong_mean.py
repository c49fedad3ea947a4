# expect: wrong_answer
# diagnosis: batch_gradient_repeated
# cases: three-examples=wrong_answer
# why: grad of the batch's mean loss, tiled onto every row
import jax
import jax.numpy as jnp


def per_example_grads(w, b, x, y):
    loss = lambda w, b: jax.nn.softplus(-y * (x @ w + b)).mean()  # noqa: E731
    gw, gb = jax.grad(loss, (0, 1))(w, b)
    return jnp.tile(gw, (x.shape[0], 1)), jnp.repeat(gb, x.shape[0])
