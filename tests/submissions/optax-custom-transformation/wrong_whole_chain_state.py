# expect: wrong_answer
# diagnosis: none
# why: returns the whole chain's state (a tuple with optax.scale's empty state) instead of its first element
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax


class WarmupMomentumState(NamedTuple):
    count: jax.Array
    trace: optax.Updates


def scale_by_warmup_momentum(beta, warmup_steps):
    def init_fn(params):
        return WarmupMomentumState(
            count=jnp.zeros([], jnp.int32),
            trace=jax.tree_util.tree_map(jnp.zeros_like, params),
        )

    def update_fn(updates, state, params=None):
        trace = jax.tree_util.tree_map(lambda m, g: beta * m + g, state.trace, updates)
        factor = jnp.minimum(1.0, (state.count + 1) / warmup_steps)
        out = jax.tree_util.tree_map(lambda m: factor * m, trace)
        return out, WarmupMomentumState(count=state.count + 1, trace=trace)

    return optax.GradientTransformation(init_fn, update_fn)


def train_steps(params, grads, beta, warmup_steps, learning_rate):
    tx = optax.chain(scale_by_warmup_momentum(beta, warmup_steps), optax.scale(-learning_rate))
    state = tx.init(params)
    steps = jax.tree_util.tree_leaves(grads)[0].shape[0]
    for t in range(steps):
        g = jax.tree_util.tree_map(lambda leaf: leaf[t], grads)
        updates, state = tx.update(g, state, params)
        params = optax.apply_updates(params, updates)
    return params, state
