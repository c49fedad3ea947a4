# expect: wrong_answer
# diagnosis: none
# why: states holds s_0 .. s_T, T + 1 rows with the initial average first, instead of s_1 .. s_T
import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(s, x):
        s = decay * s + (1 - decay) * x
        return s, s

    final, states = jax.lax.scan(step, initial, xs)
    return jnp.concatenate([initial[None, :], states]), final
