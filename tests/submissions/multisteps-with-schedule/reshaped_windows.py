# expect: accepted
# why: no Optax: the complete windows reshaped to (T // k, k, F), their means, and a lax.scan carrying w with rate init_lr * decay_rate ** j
import jax
import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    n = grads.shape[0] // k
    means = grads[: n * k].reshape(n, k, -1).mean(axis=1)
    rates = init_lr * decay_rate ** jnp.arange(n, dtype=jnp.float32)

    def step(w, window):
        mean, rate = window
        return w - rate * mean, None

    return jax.lax.scan(step, w, (means, rates))[0]
