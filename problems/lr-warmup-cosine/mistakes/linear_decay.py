"""Your decay is linear; after the warm-up the rate follows half a cosine, 0.5 * (1 + cos(pi * progress))."""

import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    w, d = warmup_steps, decay_steps
    warmup = peak_value * steps / w
    progress = jnp.clip((steps - w) / (d - w), 0.0, 1.0)
    linear = peak_value + (end_value - peak_value) * progress
    return jnp.where(steps < w, warmup, linear)
