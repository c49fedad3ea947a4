"""Your log-sum-exp is that of the shifted row: add the row's maximum back (the softmax is right)."""

import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits, axis=-1, keepdims=True)
    shifted = jnp.exp(logits - m)
    total = jnp.sum(shifted, axis=-1, keepdims=True)
    return jnp.log(total)[:, 0], shifted / total
