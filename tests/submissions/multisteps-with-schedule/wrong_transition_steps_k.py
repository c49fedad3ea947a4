# expect: wrong_answer
# diagnosis: transition_steps_every_k
# why: MultiSteps around SGD, but the schedule's transition_steps is every_k, as if it counted micro-steps: the rate decays once per k windows
import jax.numpy as jnp
import optax


def accumulate_with_schedule(w, grads, every_k, init_lr, decay_rate):
    k = int(every_k)
    schedule = optax.exponential_decay(init_lr, transition_steps=k, decay_rate=decay_rate)
    tx = optax.MultiSteps(optax.sgd(schedule), every_k_schedule=k)
    state = tx.init(w)
    for g in grads:
        updates, state = tx.update(g, state, w)
        w = optax.apply_updates(w, updates)
    return w
