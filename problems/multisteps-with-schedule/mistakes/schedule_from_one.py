"""Your first update already uses init_lr * decay_rate; the schedule starts at count 0, with init_lr."""

import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    for j in range(grads.shape[0] // k):
        w = w - init_lr * decay_rate ** (j + 1) * jnp.mean(grads[j * k : (j + 1) * k], axis=0)
    return w
