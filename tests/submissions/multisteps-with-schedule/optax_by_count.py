# expect: accepted
# why: optax.MultiSteps around optax.chain(scale_by_schedule, scale(-1)), the steps as a lax.scan over the gradients with the state in the carry
import jax
import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    schedule = optax.exponential_decay(init_lr, transition_steps=1, decay_rate=decay_rate)
    inner = optax.chain(optax.scale_by_schedule(schedule), optax.scale(-1.0))
    tx = optax.MultiSteps(inner, every_k_schedule=int(every_k))

    def step(carry, g):
        w, state = carry
        updates, state = tx.update(g, state, w)
        return (optax.apply_updates(w, updates), state), None

    (w, _), _ = jax.lax.scan(step, (w, tx.init(w)), grads)
    return w
