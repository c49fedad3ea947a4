# attack: checks that look at a different program
# expect: requirement_not_met
# why: the recurrence in NumPy on the host through pure_callback, with a scan alongside to satisfy "contains a scan"
import jax
import jax.numpy as jnp
import numpy as np
def _host(xs, decay, initial):
    state, states = np.asarray(initial), []
    for x in np.asarray(xs):
        state = decay * state + (1 - decay) * x
        states.append(state)
    return np.stack(states).astype(np.float32)
def ema_sequence(xs, decay, initial):
    states = jax.pure_callback(_host, jax.ShapeDtypeStruct(xs.shape, jnp.float32), xs, decay, initial)
    final, _ = jax.lax.scan(lambda s, x: (x, None), initial, states)
    return states, final
