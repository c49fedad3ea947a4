# expect: wrong_answer
# diagnosis: weights_swapped
# cases: short=wrong_answer
# why: a scan, but with decay weighting the new value
import jax


def ema_sequence(xs, decay, initial):
    def step(s, x):
        s = decay * x + (1 - decay) * s
        return s, s

    final, states = jax.lax.scan(step, initial, xs)
    return states, final
