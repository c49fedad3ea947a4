# expect: wrong_answer
# diagnosis: carry_before_update
# why: each step returns the state before its update, so states holds s_0 .. s_{T-1} (final is right)
import jax


def ema_sequence(xs, decay, initial):
    def step(s, x):
        new = decay * s + (1 - decay) * x
        return new, s

    final, states = jax.lax.scan(step, initial, xs)
    return states, final
