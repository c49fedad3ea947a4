"""You divide the summed gradients by xs.shape[1], the micro-batch size M; the mean is over the K micro-batches: divide by xs.shape[0]."""

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

    def step(acc, batch):
        grads = jax.grad(loss)(params, *batch)
        return jax.tree_util.tree_map(jnp.add, acc, grads), None

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    total, _ = jax.lax.scan(step, zeros, (xs, ys))
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g / xs.shape[1], params, total)
