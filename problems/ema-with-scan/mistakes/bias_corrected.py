"""You divide by 1 - decay**t (Adam's bias correction): this average starts from initial and needs no correction."""

import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(carry, x):
        s, t = carry
        new = decay * s + (1 - decay) * x
        return (new, t + 1), new / (1 - decay ** (t + 1))

    (final, t), states = jax.lax.scan(step, (initial, jnp.zeros(())), xs)
    return states, final / (1 - decay**t)
