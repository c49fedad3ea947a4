# expect: wrong_answer
# diagnosis: clip_elements
# why: optax.clip clips each element into [-max_norm, max_norm]; the statement asks for the global norm's rescaling (clip_by_global_norm)
import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    tx = optax.chain(
        optax.clip(max_norm),
        optax.add_decayed_weights(weight_decay),
        optax.scale(-learning_rate),
    )
    updates, _ = tx.update(grads, tx.init(params), params)
    return optax.apply_updates(params, updates)
