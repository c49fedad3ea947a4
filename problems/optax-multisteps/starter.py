import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(32)(x)
        x = nn.relu(x)
        x = nn.Dense(10)(x)
        return x


def multisteps_step(seed, x, y, k, lr):
    net = MLP()
    params = net.init(jax.random.PRNGKey(int(seed)), x)
    labels = y.astype(jnp.int32)

    def loss_fn(params, xb, yb):
        logits = net.apply(params, xb)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()

    # TODO: wrap optax.adam(lr) in optax.MultiSteps(every_k_schedule=int(k)).

    @jax.jit  # compiled once per slice shape; eager MultiSteps is slow
    def micro_step(params, opt_state, xb, yb):
        # TODO: gradient of loss_fn on this slice, tx.update, optax.apply_updates.
        return params, opt_state

    # TODO: run micro_step over k equal consecutive slices, then return the
    # full-batch loss as an array of shape (1,).
    return jnp.array([loss_fn(params, x, labels)])
