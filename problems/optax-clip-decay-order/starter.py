import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    # TODO: which transformations, in which order?
    tx = optax.chain(optax.scale(-learning_rate))
    updates, _ = tx.update(grads, tx.init(params), params)
    return optax.apply_updates(params, updates)
