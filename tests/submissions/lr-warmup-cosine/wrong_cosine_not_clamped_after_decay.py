# expect: wrong_answer
# diagnosis: not_held_after_decay
# why: no third branch: past D the cosine goes on and climbs back towards the peak
import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    warm = peak_value * steps / warmup_steps
    progress = (steps - warmup_steps) / (decay_steps - warmup_steps)
    cosine = end_value + (peak_value - end_value) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(steps < warmup_steps, warm, cosine)
