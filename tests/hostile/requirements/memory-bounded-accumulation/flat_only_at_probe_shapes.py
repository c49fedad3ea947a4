# attack: checks that look at a different program
# expect: wrong_answer|requirement_not_met
# why: at the memory probes' batch sizes returns a constant (flat memory, nothing computed), elsewhere the whole-batch gradient
import jax
import jax.numpy as jnp
def accumulated_grads(w, x_full, y_full, micro_batch_size):
    if x_full.shape[0] in (512, 4096, 32768):
        return jnp.zeros_like(w)
    def loss(w):
        return jnp.mean((jnp.tanh(x_full @ w) - y_full) ** 2)
    return jax.grad(loss)(w)
