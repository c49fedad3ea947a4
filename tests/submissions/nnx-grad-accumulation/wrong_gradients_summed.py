# expect: wrong_answer
# diagnosis: summed_gradients
# why: adds the two micro-batch gradients without halving them: a step twice as long
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)

    def loss_fn(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    g_a = nnx.grad(loss_fn)(model, x_a, y_a)
    g_b = nnx.grad(loss_fn)(model, x_b, y_b)
    optimizer.update(model, jax.tree_util.tree_map(jnp.add, g_a, g_b))
    return jnp.array([loss_fn(model, jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b]))])
