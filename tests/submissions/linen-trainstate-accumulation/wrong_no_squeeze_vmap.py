# expect: wrong_answer
# diagnosis: broadcast_loss
# why: the (M, 1) - (M,) broadcast written another way (y[None, :]) must still be recognised
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def linen_accumulation_step(seed, x_batches, y_batches, lr):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x_batches[0])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))

    def loss(p, x, y):
        return ((model.apply(p, x) - y[None, :]) ** 2).mean()

    g = [jax.grad(loss)(state.params, x_batches[i], y_batches[i]) for i in range(2)]
    state = state.apply_gradients(grads=jax.tree_util.tree_map(lambda a, b: 0.5 * (a + b), *g))
    return jnp.array(
        [loss(state.params, x_batches.reshape(-1, x_batches.shape[-1]), y_batches.reshape(-1))]
    )
