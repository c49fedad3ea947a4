# expect: wrong_answer
# diagnosis: none
# why: one averaged step, then the loss of the first micro-batch alone instead of the concatenated batch
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

    g0 = jax.grad(loss_fn)(state.params, x_batches[0], y_batches[0])
    g1 = jax.grad(loss_fn)(state.params, x_batches[1], y_batches[1])
    state = state.apply_gradients(grads=jax.tree_util.tree_map(lambda a, b: (a + b) / 2, g0, g1))
    return jnp.array([loss_fn(state.params, x_batches[0], y_batches[0])])
