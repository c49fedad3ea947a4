# expect: wrong_answer
# diagnosis: cosine_from_zero
# why: the cosine's progress is t / D, counted from step 0 instead of from the end of the warm-up
import jax.numpy as jnp


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    warm = peak_value * steps / warmup_steps
    cosine = end_value + (peak_value - end_value) * 0.5 * (
        1 + jnp.cos(jnp.pi * steps / decay_steps)
    )
    return jnp.where(
        steps < warmup_steps, warm, jnp.where(steps <= decay_steps, cosine, end_value)
    )
