# expect: wrong_answer
# diagnosis: none
# why: shifts each row by its largest magnitude: a row of large negative logits is shifted down, not up, and underflows to log 0
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.max(jnp.abs(logits), axis=-1, keepdims=True)
    exps = jnp.exp(logits - m)
    total = jnp.sum(exps, axis=-1, keepdims=True)
    return (m + jnp.log(total))[:, 0], exps / total
