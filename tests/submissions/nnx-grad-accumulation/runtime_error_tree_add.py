# expect: runtime_error
# why: adding two gradient pytrees with + fails; the learner sees their own traceback
import jax.numpy as jnp
import optax
from flax import nnx


def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    model = nnx.Linear(x_a.shape[-1], y_a.shape[-1], rngs=nnx.Rngs(int(seed)))
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)
    loss = lambda m, x, y: jnp.mean((m(x) - y) ** 2)  # noqa: E731
    grads = [nnx.grad(loss)(model, x_a, y_a), nnx.grad(loss)(model, x_b, y_b)]
    optimizer.update(model, (grads[0] + grads[1]) / 2)
    return jnp.zeros((1,))
