"""You called optimizer.update after each micro-batch: that is two small-batch steps, not one accumulated step."""

import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)

    def loss_fn(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    for x, y in ((x_a, y_a), (x_b, y_b)):
        _, grads = nnx.value_and_grad(loss_fn)(model, x, y)
        optimizer.update(model, grads)
    return jnp.array([loss_fn(model, jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b]))])
