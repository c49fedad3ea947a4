import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits, axis=-1, keepdims=True)
    shifted = jnp.exp(logits - m)
    total = jnp.sum(shifted, axis=-1, keepdims=True)
    return (m + jnp.log(total))[:, 0], shifted / total
