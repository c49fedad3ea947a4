# expect: accepted
# why: the derivative by hand: d/dz softplus(-y z) = -y * sigmoid(-y z), times x for w and 1 for b
import jax
import jax.numpy as jnp


def per_example_grads(w, b, x, y):
    z = x @ w + b
    coef = -y * jax.nn.sigmoid(-y * z)
    return coef[:, None] * x, coef
