# expect: wrong_answer
# diagnosis: loss_after_update
# why: records each window's loss after its update instead of before
import math

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.sgd(lr)), wrt=nnx.Param
    )
    m, k = int(micro_batch_size), int(accumulation_steps)

    def summed_loss(model, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).sum()

    n = x.shape[0]
    losses = []
    for start in range(0, n, m * k):
        stop = min(start + m * k, n)
        grads = None
        for s in range(start, stop, m):
            g = nnx.grad(summed_loss)(model, x[s : min(s + m, stop)], labels[s : min(s + m, stop)])
            grads = g if grads is None else jax.tree_util.tree_map(jnp.add, grads, g)
        count = stop - start
        optimizer.update(model, jax.tree_util.tree_map(lambda t: t / count, grads))
        losses.append(summed_loss(model, x[start:stop], labels[start:stop]) / count)
    return jnp.array(losses)
