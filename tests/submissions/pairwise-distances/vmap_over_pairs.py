# expect: accepted
# why: one distance written for two vectors, vmapped over the rows twice: no broadcasting by hand, no expansion
import jax
import jax.numpy as jnp


def pairwise_sq_dists(x):
    def dist(a, b):
        return jnp.dot(a - b, a - b)

    return jax.vmap(lambda a: jax.vmap(lambda b: dist(a, b))(x))(x)
