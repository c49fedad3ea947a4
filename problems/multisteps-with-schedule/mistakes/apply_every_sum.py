"""You chain optax.apply_every(k) after SGD: it sums the inner optimizer's updates of every micro-step, its schedule advancing each time; optax.MultiSteps averages the gradients and steps once per window."""

import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    schedule = optax.exponential_decay(init_lr, transition_steps=1, decay_rate=decay_rate)
    tx = optax.chain(optax.sgd(schedule), optax.apply_every(int(every_k)))
    state = tx.init(w)
    for g in grads:
        updates, state = tx.update(g, state, w)
        w = optax.apply_updates(w, updates)
    return w
