# expect: accepted
# why: the state as a plain dict {"count", "trace"} (the same leaf paths as the NamedTuple) and the steps run by lax.scan over the gradients' leading axis
import jax
import jax.numpy as jnp
import optax


def scale_by_warmup_momentum(beta, warmup_steps):
    def init_fn(params):
        return {
            "count": jnp.array(0, dtype=jnp.int32),
            "trace": jax.tree_util.tree_map(jnp.zeros_like, params),
        }

    def update_fn(updates, state, params=None):
        trace = jax.tree_util.tree_map(lambda m, g: g + beta * m, state["trace"], updates)
        factor = jnp.clip((state["count"] + 1) / warmup_steps, 0.0, 1.0)
        return jax.tree_util.tree_map(lambda m: m * factor, trace), {
            "count": state["count"] + 1,
            "trace": trace,
        }

    return optax.GradientTransformation(init_fn, update_fn)


def train_steps(params, grads, beta, warmup_steps, learning_rate):
    tx = optax.chain(scale_by_warmup_momentum(beta, warmup_steps), optax.scale(-learning_rate))

    def step(carry, g):
        params, state = carry
        updates, state = tx.update(g, state, params)
        return (optax.apply_updates(params, updates), state), None

    (params, state), _ = jax.lax.scan(step, (params, tx.init(params)), grads)
    return params, state[0]
