import jax
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)

    def loss_fn(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    # TODO: gradients on micro-batch A and B, average them, one update,
    # then return the full-batch loss as an array of shape (1,).
    return jnp.zeros((1,))
