# expect: wrong_answer
# diagnosis: cosine_over_total
# why: reads D as the decay's own length after the warm-up: progress (t - W) / D, held from W + D on, instead of D being the total
import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    progress = jnp.clip((steps - warmup_steps) / decay_steps, 0.0, 1.0)
    cosine = end_value + (peak_value - end_value) * 0.5 * (1 + jnp.cos(jnp.pi * progress))
    return jnp.where(steps < warmup_steps, peak_value * steps / warmup_steps, cosine)
