import jax


def ema_sequence(xs, decay, initial):
    def step(s, x):
        new = decay * s + (1 - decay) * x
        return new, new

    final, states = jax.lax.scan(step, initial, xs)
    return states, final
