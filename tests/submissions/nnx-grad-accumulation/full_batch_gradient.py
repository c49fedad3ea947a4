# expect: accepted
# why: with equal-sized micro-batches, one gradient of the full-batch mean equals the average of the two
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)
    x, y = jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b])
    loss = lambda m, x, y: jnp.mean((m(x) - y) ** 2)  # noqa: E731
    optimizer.update(model, nnx.grad(loss)(model, x, y))
    return loss(model, x, y)[None]
