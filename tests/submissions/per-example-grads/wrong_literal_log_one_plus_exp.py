# expect: wrong_answer
# diagnosis: literal_log_one_plus_exp
# why: the loss written as log(1 + exp(-y z)): vmap(grad) is right, but exp overflows for large margins and the gradient is nan
import jax
import jax.numpy as jnp


def per_example_grads(w, b, x, y):
    def loss(w, b, xi, yi):
        return jnp.log(1.0 + jnp.exp(-yi * (xi @ w + b)))

    return jax.vmap(jax.grad(loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(w, b, x, y)
