import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    schedule = optax.exponential_decay(init_lr, transition_steps=1, decay_rate=decay_rate)
    tx = optax.MultiSteps(optax.sgd(schedule), every_k_schedule=int(every_k))
    state = tx.init(w)
    for g in grads:
        updates, state = tx.update(g, state, w)
        w = optax.apply_updates(w, updates)
    return w
