# expect: requirement_not_met
# cases: four-by-two=accepted two-by-three=accepted
# why: the textbook full-batch gradient, written by hand: every number right, every example's activations at once
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    p = jnp.tanh(x_full @ w)
    return (2.0 / x_full.shape[0]) * ((p - y_full) * (1 - p**2)) @ x_full
