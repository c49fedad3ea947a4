# expect: accepted
# why: lax.fori_loop with a fixed trip count writing into a preallocated array: it lowers to a scan, so the requirement is met
import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def body(t, carry):
        s, out = carry
        s = decay * s + (1 - decay) * xs[t]
        return s, out.at[t].set(s)

    final, states = jax.lax.fori_loop(0, xs.shape[0], body, (initial, jnp.zeros_like(xs)))
    return states, final
