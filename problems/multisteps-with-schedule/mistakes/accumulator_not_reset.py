"""You never reset the accumulator after a window is applied, so each update carries every earlier window's gradients too: start each window's sum from zero."""

import jax.numpy as jnp


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    acc = jnp.zeros_like(w)
    applied = 0
    for i, g in enumerate(grads):
        acc = acc + g
        if (i + 1) % k == 0:
            w = w - init_lr * decay_rate**applied * acc / k
            applied += 1
    return w
