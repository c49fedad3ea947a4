# attack: checks that look at a different program
# expect: requirement_not_met
# why: replaces Compiled.memory_analysis at import so that "not measured" (None), or a flat fake, would pass the budget; computes the whole batch at once
import jax
import jax.numpy as jnp
jax.stages.Compiled.memory_analysis = lambda self: None
def accumulated_grads(w, x_full, y_full, micro_batch_size):
    def loss(w):
        return jnp.mean((jnp.tanh(x_full @ w) - y_full) ** 2)
    return jax.grad(loss)(w)
