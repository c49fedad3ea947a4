"""You start the average from the first value, s_1 = x_1, as pandas' ewm does; here s_0 = initial and every step, the first included, is decay * s + (1 - decay) * x."""

import jax
import jax.numpy as jnp


def ema_sequence(xs, decay, initial):
    def step(s, x):
        new = decay * s + (1 - decay) * x
        return new, new

    final, rest = jax.lax.scan(step, xs[0], xs[1:])
    return jnp.concatenate([xs[:1], rest]), final
