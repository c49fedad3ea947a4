# expect: accepted
# why: no loop at all: the masked full-batch gradient 2 X^T (m * (Xw - y)) / N in one einsum
import jax.numpy as jnp


def weighted_accumulation(w, xs, ys, mask):
    residual = mask * (jnp.einsum("kmf,f->km", xs, w) - ys)
    return 2.0 * jnp.einsum("km,kmf->f", residual, xs) / mask.sum()
