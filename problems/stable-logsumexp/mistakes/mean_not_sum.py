"""You take the log of a mean, not of a sum: the log-sum-exp is short by log(C)."""

import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits, axis=-1, keepdims=True)
    shifted = jnp.exp(logits - m)
    total = jnp.sum(shifted, axis=-1, keepdims=True)
    return (m + jnp.log(jnp.mean(shifted, axis=-1, keepdims=True)))[:, 0], shifted / total
