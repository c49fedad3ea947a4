# expect: requirement_not_met
# cases: two=accepted three=accepted
# why: the right numbers from a Python loop over nnx.grad: unrolled, so the scan requirement is not met
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
    grads = [
        nnx.grad(lambda m: jnp.mean((m(x) - y) ** 2))(model) for x, y in zip(xs, ys, strict=True)
    ]
    mean = jax.tree_util.tree_map(lambda *g: sum(g) / len(g), *grads)
    params = nnx.state(model, nnx.Param)
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, mean)
