"""You divide the learning rate by k; MultiSteps already averages the k gradients into one full-batch gradient, so the wrapped optax.adam(lr) takes one step of the full lr."""

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
    k = int(k)
    net = MLP()
    params = net.init(jax.random.PRNGKey(int(seed)), x)
    labels = y.astype(jnp.int32)

    def loss_fn(params, xb, yb):
        logits = net.apply(params, xb)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()

    tx = optax.MultiSteps(optax.adam(lr / k), every_k_schedule=k)
    opt_state = tx.init(params)

    @jax.jit
    def micro_step(params, opt_state, xb, yb):
        grads = jax.grad(loss_fn)(params, xb, yb)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    m = x.shape[0] // k
    for i in range(k):
        params, opt_state = micro_step(
            params, opt_state, x[i * m : (i + 1) * m], labels[i * m : (i + 1) * m]
        )
    return jnp.array([loss_fn(params, x, labels)])
