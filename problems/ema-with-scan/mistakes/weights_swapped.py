"""You weight the new value by decay and the old average by 1 - decay: it is decay * s + (1 - decay) * x."""

import jax


def ema_sequence(xs, decay, initial):
    def step(s, x):
        new = (1 - decay) * s + decay * x
        return new, new

    final, states = jax.lax.scan(step, initial, xs)
    return states, final
