# expect: wrong_answer
# diagnosis: float_count
# cases: two-steps=wrong_answer past-warmup=wrong_answer
# why: every number right, but the count starts as 0.0: the verdict names the leaf state/count and its dtype
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax


class State(NamedTuple):
    count: jax.Array
    trace: optax.Updates


def scale_by_warmup_momentum(beta, warmup_steps):
    def init_fn(params):
        return State(jnp.zeros(()), jax.tree_util.tree_map(jnp.zeros_like, params))

    def update_fn(updates, state, params=None):
        trace = jax.tree_util.tree_map(lambda m, g: beta * m + g, state.trace, updates)
        factor = jnp.minimum(1.0, (state.count + 1) / warmup_steps)
        return jax.tree_util.tree_map(lambda m: factor * m, trace), State(state.count + 1, trace)

    return optax.GradientTransformation(init_fn, update_fn)


def train_steps(params, grads, beta, warmup_steps, learning_rate):
    tx = optax.chain(scale_by_warmup_momentum(beta, warmup_steps), optax.scale(-learning_rate))
    state = tx.init(params)
    for t in range(jax.tree_util.tree_leaves(grads)[0].shape[0]):
        g = jax.tree_util.tree_map(lambda leaf, t=t: leaf[t], grads)
        updates, state = tx.update(g, state, params)
        params = optax.apply_updates(params, updates)
    return params, state[0]
