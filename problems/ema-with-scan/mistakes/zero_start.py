"""You start the average from zeros: the recurrence starts from initial."""

import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(s, x):
        new = decay * s + (1 - decay) * x
        return new, new

    final, states = jax.lax.scan(step, jnp.zeros_like(initial), xs)
    return states, final
