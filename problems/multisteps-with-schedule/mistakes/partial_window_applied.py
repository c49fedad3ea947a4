"""You apply the incomplete last window too; a window is applied only once every_k gradients are in."""

import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    t = grads.shape[0]
    for j in range(-(-t // k)):
        w = w - init_lr * decay_rate**j * jnp.mean(grads[j * k : (j + 1) * k], axis=0)
    return w
