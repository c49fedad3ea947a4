# expect: accepted
# why: nnx.scan over the micro-batches with the model broadcast (in_axes=(None, 0, 0)) and nnx.grad inside; one nnx.Optimizer step
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

    @nnx.scan(in_axes=(None, nnx.Carry, 0, 0), out_axes=nnx.Carry)
    def accumulate(model, acc, x, y):
        grads = nnx.grad(loss)(model, x, y)
        return jax.tree_util.tree_map(jnp.add, acc, grads)

    zeros = jax.tree_util.tree_map(jnp.zeros_like, nnx.state(model, nnx.Param))
    total = accumulate(model, zeros, xs, ys)
    mean = jax.tree_util.tree_map(lambda g: g / xs.shape[0], total)
    optimizer = nnx.Optimizer(model, optax.sgd(learning_rate), wrt=nnx.Param)
    optimizer.update(model, mean)
    return nnx.state(model, nnx.Param)
