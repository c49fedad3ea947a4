# expect: accepted
# why: one Adam step on the full-batch gradient equals MultiSteps over k equal slices
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

    def loss_fn(params):
        return optax.softmax_cross_entropy_with_integer_labels(net.apply(params, x), labels).mean()

    tx = optax.adam(lr)
    updates, _ = tx.update(jax.grad(loss_fn)(params), tx.init(params), params)
    return jnp.array([loss_fn(optax.apply_updates(params, updates))])
