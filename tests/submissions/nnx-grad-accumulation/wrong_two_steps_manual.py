# expect: wrong_answer
# diagnosis: two_updates
# why: two hand-written SGD steps, one per micro-batch: the diagnosis must find it by its numbers
import jax.numpy as jnp
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    layer = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    w, b = layer.kernel.value, layer.bias.value
    for x, y in ((x_a, y_a), (x_b, y_b)):
        residual = x @ w + b - y
        scale = 2.0 / residual.size
        w, b = w - lr * scale * x.T @ residual, b - lr * scale * residual.sum(axis=0)
    x, y = jnp.concatenate([x_a, x_b]), jnp.concatenate([y_a, y_b])
    return jnp.array([jnp.mean((x @ w + b - y) ** 2)])
