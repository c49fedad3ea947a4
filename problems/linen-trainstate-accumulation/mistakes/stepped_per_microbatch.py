"""You apply_gradients once per micro-batch, so the second gradient is taken at moved parameters and the step is about twice as long: average both gradients at the same parameters and step once."""

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

    for i in range(2):
        grads = jax.grad(loss_fn)(state.params, x_batches[i], y_batches[i])
        state = state.apply_gradients(grads=grads)
    return jnp.array(
        [loss_fn(state.params, x_batches.reshape(-1, x_batches.shape[-1]), y_batches.reshape(-1))]
    )
