import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, features, rngs):
        self.hidden = nnx.Linear(features, 8, rngs=rngs)
        self.out = nnx.Linear(8, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))[:, 0]


def nnx_scan_step(xs, ys, learning_rate):
    model = MLP(xs.shape[-1], rngs=nnx.Rngs(0))

    def loss(model, x, y):
        return jnp.mean((model(x) - y) ** 2)

    # TODO: a Python loop unrolls K times; scan over the micro-batches instead.
    grads = [nnx.grad(loss)(model, x, y) for x, y in zip(xs, ys, strict=True)]
    mean = jax.tree_util.tree_map(lambda *g: sum(g) / len(g), *grads)
    optimizer = nnx.Optimizer(model, optax.sgd(learning_rate), wrt=nnx.Param)
    optimizer.update(model, mean)
    return nnx.state(model, nnx.Param)
