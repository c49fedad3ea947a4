# expect: accepted
# why: the MSE gradient of a linear layer in closed form and a hand-written SGD step
import jax.numpy as jnp
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    layer = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    w, b = layer.kernel.value, layer.bias.value

    def grads(x, y):
        residual = x @ w + b - y
        scale = 2.0 / residual.size
        return scale * x.T @ residual, scale * residual.sum(axis=0)

    (gw_a, gb_a), (gw_b, gb_b) = grads(x_a, y_a), grads(x_b, y_b)
    w = w - lr * (gw_a + gw_b) / 2
    b = b - lr * (gb_a + gb_b) / 2
    x, y = jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b])
    return jnp.reshape(jnp.mean((x @ w + b - y) ** 2), (1,))
