# expect: wrong_answer
# diagnosis: started_from_first_value
# why: starts the average at xs[0] (as pandas' ewm does) instead of at initial
import jax


def ema_sequence(xs, decay, initial):
    def step(s, x):
        s = decay * s + (1 - decay) * x
        return s, s

    final, states = jax.lax.scan(step, xs[0], xs)
    return states, final
