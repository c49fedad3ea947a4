# expect: accepted
# why: the transformation's update written with optax.tree_utils helpers and the warm-up via jnp.where; the steps by lax.fori_loop with dynamic indexing
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
            jnp.asarray(0, jnp.int32), optax.tree_utils.tree_zeros_like(params)
        )

    def update_fn(updates, state, params=None):
        trace = optax.tree_utils.tree_add_scale(updates, beta, state.trace)
        k = state.count + 1
        factor = jnp.where(k < warmup_steps, k / warmup_steps, 1.0)
        return optax.tree_utils.tree_scale(factor, trace), WarmupMomentumState(k, trace)

    return optax.GradientTransformation(init_fn, update_fn)


def train_steps(params, grads, beta, warmup_steps, learning_rate):
    tx = optax.chain(scale_by_warmup_momentum(beta, warmup_steps), optax.scale(-learning_rate))
    steps = jax.tree_util.tree_leaves(grads)[0].shape[0]

    def body(t, carry):
        params, state = carry
        g = jax.tree_util.tree_map(lambda leaf: leaf[t], grads)
        updates, state = tx.update(g, state, params)
        return optax.apply_updates(params, updates), state

    params, state = jax.lax.fori_loop(0, steps, body, (params, tx.init(params)))
    return params, state[0]
