import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    # TODO: replace the Python loop (unrolled when jitted) with jax.lax.scan.
    state = initial
    states = []
    for x in xs:
        state = decay * state + (1 - decay) * x
        states.append(state)
    return jnp.stack(states), state
