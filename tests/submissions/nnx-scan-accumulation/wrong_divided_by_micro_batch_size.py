# expect: wrong_answer
# diagnosis: divided_by_micro_batch_size
# why: scans and sums the K gradients, then divides by M, the micro-batch size, instead of by K
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
    model = MLP(xs.shape[-1], rngs=nnx.Rngs(0))
    graphdef, params = nnx.split(model, nnx.Param)

    def loss(params, x, y):
        return jnp.mean((nnx.merge(graphdef, params)(x) - y) ** 2)

    def body(total, batch):
        g = jax.grad(loss)(params, *batch)
        return jax.tree_util.tree_map(jnp.add, total, g), None

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    total, _ = jax.lax.scan(body, zeros, (xs, ys))
    m = xs.shape[1]
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g / m, params, total)
