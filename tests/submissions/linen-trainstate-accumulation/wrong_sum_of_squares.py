# expect: wrong_answer
# diagnosis: none
# why: the loss sums the squared errors instead of averaging them, so each gradient is M times too large
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
        pred = jnp.squeeze(state.apply_fn(params, x), axis=-1)
        return jnp.sum((pred - y) ** 2)

    g0 = jax.grad(loss_fn)(state.params, x_batches[0], y_batches[0])
    g1 = jax.grad(loss_fn)(state.params, x_batches[1], y_batches[1])
    state = state.apply_gradients(grads=jax.tree_util.tree_map(lambda a, b: (a + b) / 2, g0, g1))
    x = x_batches.reshape(-1, x_batches.shape[-1])
    y = y_batches.reshape(-1)
    return jnp.array([loss_fn(state.params, x, y) / y.shape[0]])
