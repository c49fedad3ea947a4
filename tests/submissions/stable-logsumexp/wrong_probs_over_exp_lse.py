# expect: wrong_answer
# diagnosis: none
# why: a stable log-sum-exp, then probs = exp(x) / exp(lse): the unshifted exp overflows again
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits, axis=-1, keepdims=True)
    lse = m[:, 0] + jnp.log(jnp.sum(jnp.exp(logits - m), axis=-1))
    probs = jnp.exp(logits) / jnp.exp(lse)[:, None]
    return lse, probs
