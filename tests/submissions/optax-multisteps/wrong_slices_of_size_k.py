# expect: wrong_answer
# diagnosis: slices_of_size_k
# why: slices of k examples (N / k of them) instead of k slices: MultiSteps then applies a step every k slices, on a fraction of the batch
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

    for start in range(0, x.shape[0], k):
        params, opt_state = micro_step(
            params, opt_state, x[start : start + k], labels[start : start + k]
        )
    return jnp.array([loss_fn(params, x, labels)])
