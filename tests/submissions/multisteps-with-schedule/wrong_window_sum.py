# expect: wrong_answer
# diagnosis: window_sum
# why: by hand, each window steps with the sum of its k gradients instead of their mean
import jax.numpy as jnp
import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    complete = grads.shape[0] // k
    windows = grads[: complete * k].reshape(complete, k, -1)
    for j in range(complete):
        w = w - init_lr * decay_rate**j * windows[j].sum(axis=0)
    return w
