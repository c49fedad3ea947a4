# expect: accepted
# why: no module at all: the statistics threaded through lax.scan as a carry, written in the "mean + (1 - m) * (new - mean)" form
import jax
import jax.numpy as jnp


def standardize_stream(batches, eval_batch, momentum):
    def step(stats, x):
        mean, var = stats
        bm, bv = x.mean(0), ((x - x.mean(0)) ** 2).mean(0)
        out = (x - bm) * jax.lax.rsqrt(bv + 1e-5)
        return (mean + (1 - momentum) * (bm - mean), var + (1 - momentum) * (bv - var)), out

    d = batches.shape[-1]
    (mean, var), outs = jax.lax.scan(step, (jnp.zeros(d), jnp.ones(d)), batches)
    return outs, (eval_batch - mean) / jnp.sqrt(var + 1e-5), mean, var
