# expect: wrong_answer
# diagnosis: none
# why: takes an SGD step with each micro-batch's gradient / K inside the scan: K small steps, each gradient taken at moved parameters
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

    k = xs.shape[0]

    def body(p, batch):
        g = jax.grad(loss)(p, *batch)
        return jax.tree_util.tree_map(lambda a, b: a - learning_rate * b / k, p, g), None

    final, _ = jax.lax.scan(body, params, (xs, ys))
    return final
