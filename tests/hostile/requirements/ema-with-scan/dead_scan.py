# attack: checks that look at a different program
# expect: requirement_not_met
# why: a lax.scan whose result is never used beside the loop-free closed form that computes the answer
import jax
import jax.numpy as jnp
def _no_loop(xs, decay, initial):
    # The same recurrence in closed form: powers of decay in a (T, T) matrix, no loop.
    i = jnp.arange(xs.shape[0])
    powers = jnp.where(i[:, None] >= i[None, :], decay ** (i[:, None] - i[None, :]), 0.0)
    states = (1 - decay) * powers @ xs + (decay ** (i + 1))[:, None] * initial
    return states, states[-1]
def ema_sequence(xs, decay, initial):
    jax.lax.scan(lambda s, x: (s + x, None), initial, xs)  # "contains a scan"
    return _no_loop(xs, decay, initial)
