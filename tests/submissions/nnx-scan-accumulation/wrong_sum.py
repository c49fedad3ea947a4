# expect: wrong_answer
# diagnosis: summed_gradients
# cases: two=wrong_answer
# why: a proper scan, but the accumulated gradients are never divided by the number of micro-batches
import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, features, rngs):
        self.hidden = nnx.Linear(features, 8, rngs=rngs)
        self.out = nnx.Linear(8, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))[:, 0]


def nnx_scan_step(xs, ys, learning_rate):
    graphdef, params = nnx.split(MLP(xs.shape[-1], rngs=nnx.Rngs(0)), nnx.Param)
    grad = jax.grad(lambda p, x, y: jnp.mean((nnx.merge(graphdef, p)(x) - y) ** 2))
    total, _ = jax.lax.scan(
        lambda acc, b: (jax.tree_util.tree_map(jnp.add, acc, grad(params, *b)), None),
        jax.tree_util.tree_map(jnp.zeros_like, params),
        (xs, ys),
    )
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, total)
