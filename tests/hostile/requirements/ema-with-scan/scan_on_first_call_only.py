# attack: checks that look at a different program
# expect: requirement_not_met
# why: a lax.scan the first time the function is traced (once, an analysis traced the first sample), a loop-free closed form every time after
import jax
import jax.numpy as jnp
CALLS = [0]
def _no_loop(xs, decay, initial):
    # The same recurrence in closed form: powers of decay in a (T, T) matrix, no loop.
    i = jnp.arange(xs.shape[0])
    powers = jnp.where(i[:, None] >= i[None, :], decay ** (i[:, None] - i[None, :]), 0.0)
    states = (1 - decay) * powers @ xs + (decay ** (i + 1))[:, None] * initial
    return states, states[-1]
def ema_sequence(xs, decay, initial):
    CALLS[0] += 1
    if CALLS[0] == 1:
        def step(s, x):
            new = decay * s + (1 - decay) * x
            return new, new
        final, states = jax.lax.scan(step, initial, xs)
        return states, final
    return _no_loop(xs, decay, initial)
