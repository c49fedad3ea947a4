# expect: wrong_answer
# diagnosis: bias_corrected
# why: divides each state by 1 - decay^t, Adam's bias correction, which the recurrence does not have
import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(carry, x):
        s, t = carry
        s = decay * s + (1 - decay) * x
        t = t + 1
        return (s, t), s / (1 - decay**t)

    (_, _), states = jax.lax.scan(step, (initial, jnp.float32(0.0)), xs)
    return states, states[-1]
