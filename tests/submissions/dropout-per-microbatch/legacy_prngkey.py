# expect: accepted
# why: the older uint32 keys (jax.random.PRNGKey) hold the same bits as jax.random.key: the same split, the same masks
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    keys = jax.random.split(jax.random.PRNGKey(int(seed)), xs.shape[0])
    grads = []
    for i in range(xs.shape[0]):
        keep = jax.random.bernoulli(keys[i], 1 - rate, xs[i].shape)
        x = jnp.where(keep, xs[i] / (1 - rate), 0.0)
        grads.append(jax.grad(lambda w: jnp.mean((x @ w - ys[i]) ** 2))(w))
    return jnp.mean(jnp.stack(grads), axis=0)
