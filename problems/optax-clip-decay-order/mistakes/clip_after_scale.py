"""You clip after scaling by the learning rate, so the threshold bounds the step, not the gradient: clip first."""

import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    tx = optax.chain(
        optax.add_decayed_weights(weight_decay),
        optax.scale(-learning_rate),
        optax.clip_by_global_norm(max_norm),
    )
    updates, _ = tx.update(grads, tx.init(params), params)
    return optax.apply_updates(params, updates)
