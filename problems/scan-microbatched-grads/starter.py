import jax
import jax.numpy as jnp
from jax import lax


def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    n = int(n_microbatches)

    def micro_loss(w, x, y):
        return jnp.sum((w * x - y) ** 2)

    # TODO: reshape into n chunks and accumulate jax.grad(micro_loss) with lax.scan.
    return jnp.zeros(())
