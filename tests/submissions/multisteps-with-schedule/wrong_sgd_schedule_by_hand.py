# expect: wrong_answer
# diagnosis: schedule_per_microstep
# cases: two-windows=wrong_answer
# why: accumulation done right by hand, but the schedule is fed the micro-step counter
import jax.numpy as jnp
import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    schedule = optax.exponential_decay(init_lr, transition_steps=1, decay_rate=decay_rate)
    k = int(every_k)
    acc = jnp.zeros_like(w)
    for i, g in enumerate(grads):
        acc = acc + g
        if (i + 1) % k == 0:
            w = w - schedule(i) * acc / k
            acc = jnp.zeros_like(w)
    return w
