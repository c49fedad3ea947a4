"""You stack the average from before each update (s_0 to s_{T-1}): return the new state as scan's output."""

import jax


def ema_sequence(xs, decay, initial):
    def step(s, x):
        return decay * s + (1 - decay) * x, s

    final, states = jax.lax.scan(step, initial, xs)
    return states, final
