# expect: requirement_not_met
# cases: short=accepted one-feature=accepted
# why: a vectorised closed form (powers of decay and a cumulative sum): right numbers on the samples, but no scan, so the requirement fails
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    t = jnp.arange(1, xs.shape[0] + 1, dtype=jnp.float32)[:, None]
    powers = decay**t
    weighted = jnp.cumsum((1 - decay) * xs / powers, axis=0)
    states = powers * (initial + weighted)
    return states, states[-1]
