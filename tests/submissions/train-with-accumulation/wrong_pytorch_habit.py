# expect: wrong_answer
# diagnosis: divide_by_accumulation_steps
# why: the seed's PyTorch recipe (mean loss / accumulation_steps) mis-scales the short window
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

    def scaled(model, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).mean() / steps

    losses, acc, window_loss = [], None, 0.0
    starts = list(range(0, x.shape[0], micro))
    for i, s in enumerate(starts):
        xb, yb = x[s : s + micro], labels[s : s + micro]
        loss, g = nnx.value_and_grad(scaled)(model, xb, yb)
        acc = g if acc is None else jax.tree_util.tree_map(jnp.add, acc, g)
        window_loss += loss * steps * xb.shape[0] / (steps * micro)
        if (i + 1) % steps == 0 or i == len(starts) - 1:
            optimizer.update(model, acc)
            losses.append(window_loss)
            acc, window_loss = None, 0.0
    return jnp.stack(losses)
