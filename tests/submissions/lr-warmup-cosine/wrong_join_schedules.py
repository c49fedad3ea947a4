# expect: wrong_answer
# diagnosis: cosine_over_total
# cases: short=wrong_answer
# why: optax.join_schedules with a cosine_decay_schedule of decay_steps steps: the cosine is then D long, not D - W
import optax


def learning_rates(steps, peak_value, warmup_steps, decay_steps, end_value):
    w = int(warmup_steps)
    schedule = optax.join_schedules(
        [
            optax.linear_schedule(0.0, peak_value, w),
            optax.cosine_decay_schedule(peak_value, int(decay_steps), alpha=end_value / peak_value),
        ],
        [w],
    )
    return schedule(steps)
