# expect: accepted
# why: scanning over time indices instead of rows, with the weights written the other way round (s + (1 - d) * (x - s))
import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(s, t):
        s = s + (1.0 - decay) * (xs[t] - s)
        return s, s

    final, states = jax.lax.scan(step, initial, jnp.arange(xs.shape[0]))
    return states, final
