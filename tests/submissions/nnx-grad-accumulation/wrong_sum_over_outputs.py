# expect: wrong_answer
# diagnosis: loss_summed_over_outputs
# why: a per-example squared error summed over the D_out outputs, then averaged over rows: not the mean over all elements when D_out > 1
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)

    def loss_fn(model, x, y):
        return jnp.mean(jnp.sum((model(x) - y) ** 2, axis=-1))

    g_a = nnx.grad(loss_fn)(model, x_a, y_a)
    g_b = nnx.grad(loss_fn)(model, x_b, y_b)
    optimizer.update(model, jax.tree_util.tree_map(lambda a, b: (a + b) / 2, g_a, g_b))
    return jnp.array([loss_fn(model, jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b]))])
