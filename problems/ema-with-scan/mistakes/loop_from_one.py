"""Your loop runs t from 1 as in the formula, so xs[0] is never used and states[0] keeps its zeros: in Python x_1 is xs[0]; loop over all T rows, t = 0 to T - 1."""

import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def body(t, carry):
        s, out = carry
        s = decay * s + (1 - decay) * xs[t]
        return s, out.at[t].set(s)

    final, states = jax.lax.fori_loop(1, xs.shape[0], body, (initial, jnp.zeros_like(xs)))
    return states, final
