# expect: wrong_answer
# diagnosis: none
# why: shifts each row by its minimum: exponents stay >= 0, so a row that spreads by more than 88 overflows
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    m = jnp.min(logits, axis=1, keepdims=True)
    exps = jnp.exp(logits - m)
    total = exps.sum(axis=1, keepdims=True)
    return jnp.squeeze(m + jnp.log(total), 1), exps / total
