"""You stepped with the first micro-batch's gradient only; compute the gradient of both and average them."""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def linen_accumulation_step(seed, x_batches, y_batches, lr):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x_batches[0])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))

    def loss_fn(params, x, y):
        return jnp.mean((state.apply_fn(params, x)[:, 0] - y) ** 2)

    state = state.apply_gradients(grads=jax.grad(loss_fn)(state.params, x_batches[0], y_batches[0]))
    return jnp.array(
        [loss_fn(state.params, x_batches.reshape(-1, x_batches.shape[-1]), y_batches.reshape(-1))]
    )
