# expect: accepted
# why: averaging k slice gradients by hand with tree_map, then one jitted Adam step
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
    grad_fn = jax.jit(jax.grad(loss_fn))
    m = x.shape[0] // k
    grads = [grad_fn(params, x[i * m : (i + 1) * m], labels[i * m : (i + 1) * m]) for i in range(k)]
    mean = jax.tree_util.tree_map(lambda *g: sum(g) / k, *grads)
    tx = optax.adam(lr)
    updates, _ = tx.update(mean, tx.init(params), params)
    return jnp.array([loss_fn(optax.apply_updates(params, updates), x, labels)])
