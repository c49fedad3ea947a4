# expect: wrong_answer
# diagnosis: warmup_from_one
# why: the warm-up climbs as (t + 1) / W, so step 0 is not 0 (the decay is right)
import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    warm = peak_value * (steps + 1) / warmup_steps
    progress = (steps - warmup_steps) / (decay_steps - warmup_steps)
    cosine = end_value + (peak_value - end_value) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(steps < warmup_steps, warm, jnp.where(steps <= decay_steps, cosine, end_value))
