"""You shift by one maximum for the whole batch: rows far below it underflow to 0. Use each row's own maximum (axis=-1, keepdims=True)."""

import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits)
    shifted = jnp.exp(logits - m)
    total = jnp.sum(shifted, axis=-1, keepdims=True)
    return (m + jnp.log(total))[:, 0], shifted / total
