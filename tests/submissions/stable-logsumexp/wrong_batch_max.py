# expect: wrong_answer
# diagnosis: batch_maximum
# cases: moderate=accepted large-offsets=wrong_answer
# why: one maximum for the whole batch: fine when the rows are close, -inf for rows far below the top one
import jax.numpy as jnp


def logsumexp_and_softmax(logits):
    top = logits.max()
    exps = jnp.exp(logits - top)
    sums = exps.sum(axis=-1)
    return top + jnp.log(sums), exps / sums[:, None]
