# expect: wrong_answer
# diagnosis: none
# why: splits with jnp.array_split into ceil(N / micro_batch_size) pieces, which spreads the remainder over the first pieces instead of leaving one short last micro-batch
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
    pieces = math.ceil(n / m)
    xs = jnp.array_split(x, pieces)
    ys = jnp.array_split(labels, pieces)
    losses = []
    for w in range(0, pieces, k):
        xw, yw = xs[w : w + k], ys[w : w + k]
        count = sum(xb.shape[0] for xb in xw)
        loss = sum(summed_loss(model, xb, yb) for xb, yb in zip(xw, yw)) / count
        grads = None
        for xb, yb in zip(xw, yw):
            g = nnx.grad(summed_loss)(model, xb, yb)
            grads = g if grads is None else jax.tree_util.tree_map(jnp.add, grads, g)
        losses.append(loss)
        optimizer.update(model, jax.tree_util.tree_map(lambda t: t / count, grads))
    return jnp.array(losses)
