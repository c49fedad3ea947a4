# expect: accepted
# why: Optax's own schedule called on the array of steps (its decay_steps is the total length, as in the statement)
import optax


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=peak_value,
        warmup_steps=int(warmup_steps),
        decay_steps=int(decay_steps),
        end_value=end_value,
    )
    return schedule(steps)
