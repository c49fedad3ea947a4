# expect: wrong_answer
# diagnosis: eval_batch_statistics
# cases: two-batches=wrong_answer
# why: the running statistics are kept right but never used: evaluation standardizes with its own batch
import jax.numpy as jnp


def standardize_stream(batches, eval_batch, momentum):
    d = batches.shape[-1]
    mean, var = jnp.zeros(d), jnp.ones(d)
    outs = []
    for x in batches:
        outs.append((x - x.mean(0)) / jnp.sqrt(x.var(0) + 1e-5))
        mean = momentum * mean + (1 - momentum) * x.mean(0)
        var = momentum * var + (1 - momentum) * x.var(0)
    e = (eval_batch - eval_batch.mean(0)) / jnp.sqrt(eval_batch.var(0) + 1e-5)
    return jnp.stack(outs), e, mean, var
