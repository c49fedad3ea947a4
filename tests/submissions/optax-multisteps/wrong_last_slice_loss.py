# expect: wrong_answer
# diagnosis: loss_on_last_slice
# why: returns the loss of the last slice with the final parameters, not the loss on the full batch
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
    k = int(k)

    def loss_fn(params, xb, yb):
        logits = net.apply(params, xb)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()

    tx = optax.MultiSteps(optax.adam(lr), every_k_schedule=k)
    opt_state = tx.init(params)

    @jax.jit
    def micro_step(params, opt_state, xb, yb):
        grads = jax.grad(loss_fn)(params, xb, yb)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    size = x.shape[0] // k
    for i in range(k):
        xb, yb = x[i * size : (i + 1) * size], labels[i * size : (i + 1) * size]
        params, opt_state = micro_step(params, opt_state, xb, yb)
    return jnp.array([loss_fn(params, xb, yb)])
