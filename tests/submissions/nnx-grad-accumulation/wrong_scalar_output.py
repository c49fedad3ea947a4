# expect: wrong_answer
# diagnosis: none
# why: the right number with the wrong shape (a scalar, not shape (1,)) must be rejected, not broadcast
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)
    loss = lambda m, x, y: jnp.mean((m(x) - y) ** 2)  # noqa: E731
    ga, gb = nnx.grad(loss)(model, x_a, y_a), nnx.grad(loss)(model, x_b, y_b)
    optimizer.update(model, jax.tree_util.tree_map(lambda a, b: (a + b) / 2, ga, gb))
    return loss(model, jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b]))
