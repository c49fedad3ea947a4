"""You drop the short last micro-batch; its examples belong to the last window, whose gradient and loss average over every example it really has."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    micro, steps = int(micro_batch_size), int(accumulation_steps)
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.sgd(lr)), wrt=nnx.Param
    )

    def summed_loss(model, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).sum()

    starts = list(range(0, x.shape[0] - micro + 1, micro))
    losses = []
    for first in range(0, len(starts), steps):
        total_loss, total_grads, count = 0.0, None, 0
        for start in starts[first : first + steps]:
            xb, yb = x[start : start + micro], labels[start : start + micro]
            loss, grads = nnx.value_and_grad(summed_loss)(model, xb, yb)
            total_loss += loss
            total_grads = (
                grads
                if total_grads is None
                else jax.tree_util.tree_map(jnp.add, total_grads, grads)
            )
            count += xb.shape[0]
        optimizer.update(model, jax.tree_util.tree_map(lambda g: g / count, total_grads))
        losses.append(total_loss / count)
    return jnp.stack(losses)
