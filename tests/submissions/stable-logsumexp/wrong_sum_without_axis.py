# expect: wrong_answer
# diagnosis: none
# why: each row's own maximum, but the log-sum-exp sums over the whole batch (no axis)
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(logits, axis=-1, keepdims=True)
    exps = jnp.exp(logits - m)
    lse = m[:, 0] + jnp.log(jnp.sum(exps))
    probs = exps / jnp.sum(exps, axis=-1, keepdims=True)
    return lse, probs
