# expect: wrong_answer
# diagnosis: none
# why: leaves the bias out of z (z = x . w), so every gradient is taken at the wrong point
import jax


def per_example_grads(w, b, x, y):
    def loss(w, b, xi, yi):
        return jax.nn.softplus(-yi * (xi @ w))

    return jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(w, b, x, y)
