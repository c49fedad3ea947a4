"""You step with the window's sum; MultiSteps applies the mean of the every_k gradients."""

import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    for j in range(grads.shape[0] // k):
        w = w - init_lr * decay_rate**j * jnp.sum(grads[j * k : (j + 1) * k], axis=0)
    return w
