# expect: wrong_answer
# diagnosis: none
# why: the cross-entropy gradient for labels in {0, 1}, (sigmoid(z) - y) x, applied to labels in {-1, +1}
import jax
import jax.numpy as jnp


def per_example_grads(w, b, x, y):
    z = x @ w + b
    coef = jax.nn.sigmoid(z) - y
    return coef[:, None] * x, coef
