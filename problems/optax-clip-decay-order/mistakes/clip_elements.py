"""You clip each element to [-max_norm, max_norm] (optax.clip); the task clips the gradient's global norm (optax.clip_by_global_norm)."""

import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    tx = optax.chain(
        optax.clip(max_norm),
        optax.add_decayed_weights(weight_decay),
        optax.scale(-learning_rate),
    )
    updates, _ = tx.update(grads, tx.init(params), params)
    return optax.apply_updates(params, updates)
