# expect: accepted
# why: value_and_grad inside the scan body carrying the loss along, the sum divided by N after the loop: flat memory, the same gradient
import jax
import jax.numpy as jnp


def accumulated_grads(w, x_full, y_full, micro_batch_size):
    m = int(micro_batch_size)
    xs = x_full.reshape(x_full.shape[0] // m, m, -1)
    ys = y_full.reshape(-1, m)

    def step(carry, batch):
        loss_sum, grad_sum = carry
        x, y = batch
        loss, g = jax.value_and_grad(lambda w: jnp.sum((jnp.tanh(x @ w) - y) ** 2))(w)
        return (loss_sum + loss, grad_sum + g), None

    (_, total), _ = jax.lax.scan(step, (jnp.zeros(()), jnp.zeros_like(w)), (xs, ys))
    return total / x_full.shape[0]
