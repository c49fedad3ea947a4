# expect: accepted
# why: jax.nn's own trick (the shift under stop_gradient) and a transposed reduction, written differently but equal
import jax
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jax.lax.stop_gradient(logits.max(axis=-1))
    total = jnp.exp(logits.T - m).sum(axis=0)
    return m + jnp.log(total), (jnp.exp(logits.T - m) / total).T
