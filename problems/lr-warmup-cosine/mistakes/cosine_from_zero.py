"""Your cosine starts at step 0, not where the warm-up ends: its progress is (t - W) / (D - W)."""

import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    w, d = warmup_steps, decay_steps
    warmup = peak_value * steps / w
    progress = jnp.clip(steps / d, 0.0, 1.0)
    cosine = end_value + (peak_value - end_value) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(steps < w, warmup, cosine)
