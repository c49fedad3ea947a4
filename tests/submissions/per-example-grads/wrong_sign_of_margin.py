# expect: wrong_answer
# diagnosis: margin_sign
# why: softplus(y z) instead of softplus(-y z): the loss of the opposite label
import jax


def per_example_grads(w, b, x, y):
    def loss(w, b, xi, yi):
        return jax.nn.softplus(yi * (jnp_dot(xi, w) + b))

    def jnp_dot(a, c):
        return (a * c).sum()

    return jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(w, b, x, y)
