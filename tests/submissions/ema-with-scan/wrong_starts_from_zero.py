# expect: wrong_answer
# diagnosis: zero_start
# why: the carry starts at zeros, ignoring initial
import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(s, x):
        s = decay * s + (1 - decay) * x
        return s, s

    final, states = jax.lax.scan(step, jnp.zeros_like(initial), xs)
    return states, final
