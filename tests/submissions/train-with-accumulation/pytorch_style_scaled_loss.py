# expect: accepted
# why: PyTorch-style loss scaling done right: each micro-batch's summed loss divided by the window's example count
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    micro, steps = int(micro_batch_size), int(accumulation_steps)
    n = x.shape[0]
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    optimizer = nnx.Optimizer(
        model, optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.sgd(lr)), wrt=nnx.Param
    )
    losses = []
    n_micro = -(-n // micro)
    for w in range(0, n_micro, steps):
        lo, hi = w * micro, min(n, (w + steps) * micro)
        count = hi - lo

        def scaled(model, xb, yb):
            return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).sum() / count

        acc, window_loss = None, 0.0
        for s in range(lo, hi, micro):
            loss, g = nnx.value_and_grad(scaled)(model, x[s : s + micro], labels[s : s + micro])
            acc = g if acc is None else jax.tree_util.tree_map(lambda a, b: a + b, acc, g)
            window_loss = window_loss + loss
        optimizer.update(model, acc)
        losses.append(window_loss)
    return jnp.stack(losses)
