# expect: wrong_answer
# diagnosis: one_key_for_all
# cases: two-micro-batches=wrong_answer
# why: the key made once and handed to every micro-batch: identical masks
import jax
import jax.numpy as jnp


def dropout_accumulation(seed, w, xs, ys, rate):
    key = jax.random.key(int(seed))

    def g(x, y):
        keep = jax.random.bernoulli(key, 1 - rate, x.shape)
        d = jnp.where(keep, x / (1 - rate), 0.0)
        return jax.grad(lambda w: jnp.mean((d @ w - y) ** 2))(w)

    return jax.vmap(g)(xs, ys).mean(0)
