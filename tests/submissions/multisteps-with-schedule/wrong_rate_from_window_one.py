# expect: wrong_answer
# diagnosis: schedule_from_one
# why: by hand, window j steps with init_lr * decay_rate ** (j + 1): the first window already decayed
import jax.numpy as jnp
import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    complete = grads.shape[0] // k
    for j in range(complete):
        g = jnp.mean(grads[j * k : (j + 1) * k], axis=0)
        w = w - init_lr * decay_rate ** (j + 1) * g
    return w
