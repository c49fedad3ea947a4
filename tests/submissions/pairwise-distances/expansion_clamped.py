# expect: accepted
# why: the expansion |a|^2 + |b|^2 - 2 a.b with one matrix product, clamped at zero: within the cases' tolerance, and non-negative in the hidden test
import jax.numpy as jnp


def pairwise_sq_dists(x):
    norms = (x**2).sum(axis=-1, keepdims=True)
    table = norms + norms.T - 2 * jnp.matmul(x, x.T)
    return jnp.clip(table, 0.0, None)
