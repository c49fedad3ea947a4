"""You add end_value to peak times the cosine, so the decay starts at peak + end: the cosine spans peak - end_value, end + (peak - end) * 0.5 * (1 + cos(pi * progress))."""

import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    w, d = warmup_steps, decay_steps
    warmup = peak_value * steps / w
    progress = jnp.clip((steps - w) / (d - w), 0.0, 1.0)
    cosine = end_value + peak_value * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(steps < w, warmup, cosine)
