# expect: wrong_answer
# diagnosis: decay_then_clip
# cases: clipped=wrong_answer not-clipped=accepted
# why: decay added to the gradient by hand before a global-norm clip: same as clipping the sum; right only when nothing is clipped
import jax
import optax


def clip_decay_step(params, grads, max_norm, weight_decay, learning_rate):
    g = jax.tree_util.tree_map(lambda g, p: g + weight_decay * p, grads, params)
    g, _ = optax.clip_by_global_norm(max_norm).update(g, optax.EmptyState())
    return jax.tree_util.tree_map(lambda p, u: p - learning_rate * u, params, g)
