from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax


class WarmupMomentumState(NamedTuple):
    count: jax.Array
    trace: optax.Updates


def scale_by_warmup_momentum(beta, warmup_steps):
    def init_fn(params):
        # TODO: count 0 (int32), trace zeros like params
        raise NotImplementedError

    def update_fn(updates, state, params=None):
        # TODO: m' = beta * m + g; scale the output by min(1, (count + 1) / warmup_steps)
        raise NotImplementedError

    return optax.GradientTransformation(init_fn, update_fn)


def train_steps(params, grads, beta, warmup_steps, learning_rate):
    tx = optax.chain(scale_by_warmup_momentum(beta, warmup_steps), optax.scale(-learning_rate))
    state = tx.init(params)
    steps = jax.tree_util.tree_leaves(grads)[0].shape[0]
    for t in range(steps):
        g = jax.tree_util.tree_map(lambda leaf: leaf[t], grads)
        updates, state = tx.update(g, state, params)
        params = optax.apply_updates(params, updates)
    return params, state[0]
