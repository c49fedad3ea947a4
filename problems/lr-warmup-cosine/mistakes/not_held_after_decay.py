"""Past decay_steps your cosine climbs back up, since its progress passes 1: the rate stays at end_value for t > D; clip the progress at 1 (or select end_value there)."""

import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    w, d = warmup_steps, decay_steps
    warmup = peak_value * steps / w
    progress = (steps - w) / (d - w)
    cosine = end_value + (peak_value - end_value) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(steps < w, warmup, cosine)
