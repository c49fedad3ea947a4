# expect: wrong_answer
# diagnosis: loss_before_update
# why: accumulates and steps correctly but returns the full-batch loss computed before the update
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)

    def loss_fn(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    x = jnp.concatenate([x_a, x_b])
    y = jnp.concatenate([y_a, y_b])
    before = loss_fn(model, x, y)
    g_a = nnx.grad(loss_fn)(model, x_a, y_a)
    g_b = nnx.grad(loss_fn)(model, x_b, y_b)
    optimizer.update(model, jax.tree_util.tree_map(lambda a, b: (a + b) / 2, g_a, g_b))
    return jnp.array([before])
