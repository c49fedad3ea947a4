import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    # TODO: this overflows for large logits; shift each row by its maximum first.
    exps = jnp.exp(logits)
    total = jnp.sum(exps, axis=-1, keepdims=True)
    return jnp.log(total)[:, 0], exps / total
