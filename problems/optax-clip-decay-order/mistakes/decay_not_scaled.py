"""Your decay is not multiplied by the learning rate: the step is -learning_rate * (clipped gradient + weight_decay * p)."""

import jax
import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    tx = optax.chain(optax.clip_by_global_norm(max_norm), optax.scale(-learning_rate))
    updates, _ = tx.update(grads, tx.init(params), params)
    stepped = optax.apply_updates(params, updates)
    return jax.tree_util.tree_map(lambda s, p: s - weight_decay * p, stepped, params)
