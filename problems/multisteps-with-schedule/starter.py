import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    schedule = optax.exponential_decay(init_lr, transition_steps=1, decay_rate=decay_rate)
    # TODO: this steps on every micro-batch; accumulate every_k of them per update.
    tx = optax.sgd(schedule)
    state = tx.init(w)
    for g in grads:
        updates, state = tx.update(g, state, w)
        w = optax.apply_updates(w, updates)
    return w
