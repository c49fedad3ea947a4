"""You drop the leftover micro-steps from the start (the last T // k * k gradients); windows start at micro-step 0, and the incomplete one is the last."""

import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    n = grads.shape[0] // k
    windows = grads[grads.shape[0] - n * k :].reshape(n, k, -1)
    for j in range(n):
        w = w - init_lr * decay_rate**j * jnp.mean(windows[j], axis=0)
    return w
