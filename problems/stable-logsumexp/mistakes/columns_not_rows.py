"""You reduce over the batch axis (0) instead of each row's logits (axis=-1)."""

import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits, axis=0, keepdims=True)
    shifted = jnp.exp(logits - m)
    total = jnp.sum(shifted, axis=0, keepdims=True)
    return (m + jnp.log(total))[0], shifted / total
