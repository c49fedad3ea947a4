# expect: accepted
# why: optax's own decoupled-decay pattern: clip, then add_decayed_weights, then scale_by_learning_rate (which negates)
import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    tx = optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.add_decayed_weights(weight_decay),
        optax.scale_by_learning_rate(learning_rate),
    )
    state = tx.init(params)
    updates, state = tx.update(grads, state, params)
    return optax.apply_updates(params, updates)
