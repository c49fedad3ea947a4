# expect: accepted
# why: three explicit branches with nested where, the cosine written as cos^2 (0.5 * (1 + cos x) = cos^2(x / 2))
import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    t, w, d = steps, warmup_steps, decay_steps
    half = jnp.cos(0.5 * jnp.pi * (t - w) / (d - w)) ** 2
    return jnp.where(
        t < w,
        peak_value * t / w,
        jnp.where(t <= d, end_value + (peak_value - end_value) * half, end_value),
    )
