# expect: accepted
# why: per-example gradients with vmap, averaged over all 2*M examples, then TrainState
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


def linen_accumulation_step(seed, x_batches, y_batches, lr):
    model = nn.Dense(1)
    params = model.init(jax.random.PRNGKey(int(seed)), x_batches[0])
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr))

    def example_loss(p, xi, yi):
        return (model.apply(p, xi[None, :])[0, 0] - yi) ** 2

    x = x_batches.reshape(-1, x_batches.shape[-1])
    y = y_batches.reshape(-1)
    per_example = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(state.params, x, y)
    state = state.apply_gradients(
        grads=jax.tree_util.tree_map(lambda g: g.mean(axis=0), per_example)
    )
    pred = model.apply(state.params, x)[:, 0]
    return jnp.array([jnp.mean((pred - y) ** 2)])
