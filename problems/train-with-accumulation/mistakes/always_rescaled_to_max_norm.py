"""You rescale every window's gradient to norm max_grad_norm; clipping only shrinks a gradient whose global norm is above it and leaves smaller ones alone (optax.clip_by_global_norm)."""

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
    optimizer = nnx.Optimizer(model, optax.sgd(lr), wrt=nnx.Param)

    def summed_loss(model, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).sum()

    starts = list(range(0, x.shape[0], micro))
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
        grads = jax.tree_util.tree_map(lambda g: g / count, total_grads)
        norm = optax.global_norm(grads)
        optimizer.update(model, jax.tree_util.tree_map(lambda g: g * max_grad_norm / norm, grads))
        losses.append(total_loss / count)
    return jnp.stack(losses)
