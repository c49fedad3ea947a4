# expect: accepted
# why: nnx.split once, value_and_grad of the merged model inside lax.scan, and the new parameters returned as a plain dict (the same leaves as nnx.State)
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

    def step(acc, batch):
        x, y = batch
        _, g = jax.value_and_grad(lambda p: jnp.mean((nnx.merge(graphdef, p)(x) - y) ** 2))(params)
        return jax.tree_util.tree_map(lambda a, b: a + b / xs.shape[0], acc, g), None

    mean, _ = jax.lax.scan(step, jax.tree_util.tree_map(jnp.zeros_like, params), (xs, ys))
    new = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, mean)
    return nnx.to_pure_dict(new)
