# attack: checks that look at a different program
# expect: requirement_not_met
# why: Python that cannot be traced (float() of an input) so the grader falls back to running it op by op, where nothing is checked
import jax.numpy as jnp
def ema_sequence(xs, decay, initial):
    if float(xs[0, 0]) > -1e30:  # needs a concrete value: jit fails, eager runs
        state, states = initial, []
        for x in xs:
            state = decay * state + (1 - decay) * x
            states.append(state)
        return jnp.stack(states), state
    return xs, initial
