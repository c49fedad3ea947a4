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
        # TODO: mean squared error; mind the shapes of the prediction and y.
        return 0.0

    # TODO: two gradients, average them, apply once, return the loss after the step.
    return jnp.zeros((1,))
