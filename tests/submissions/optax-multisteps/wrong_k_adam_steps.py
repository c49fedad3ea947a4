# expect: wrong_answer
# diagnosis: plain_adam
# why: k jitted Adam steps written with a scan: the same misconception as plain_adam, written differently
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
    loss_fn = lambda p, xb, yb: optax.softmax_cross_entropy_with_integer_labels(
        net.apply(p, xb), yb
    ).mean()  # noqa: E731
    tx = optax.adam(lr)
    xs = x.reshape((k, -1) + x.shape[1:])
    ys = labels.reshape(k, -1)

    def step(carry, batch):
        p, s = carry
        updates, s = tx.update(jax.grad(loss_fn)(p, *batch), s, p)
        return (optax.apply_updates(p, updates), s), None

    (params, _), _ = jax.lax.scan(step, (params, tx.init(params)), (xs, ys))
    return jnp.array([loss_fn(params, x, labels)])
