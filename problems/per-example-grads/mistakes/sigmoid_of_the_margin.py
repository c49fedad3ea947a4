"""Your derivative takes the sigmoid of +y z: the derivative of softplus(-y z) with respect to z is -y * sigmoid(-y z), largest for the examples the model gets wrong."""

import jax


def per_example_grads(w, b, x, y):
    z = x @ w + b
    coef = -y * jax.nn.sigmoid(y * z)
    return coef[:, None] * x, coef
