# expect: accepted
# why: one gradient of the window's mean loss over its concatenated examples, clipped by hand with optax
import jax
import jax.numpy as jnp
import optax
from flax import nnx


def train_with_accumulation(
    seed, x, y, n_classes, micro_batch_size, accumulation_steps, lr, max_grad_norm
):
    window = int(micro_batch_size) * int(accumulation_steps)
    model = nnx.Linear(x.shape[1], int(n_classes), rngs=nnx.Rngs(int(seed)))
    labels = y.astype(jnp.int32)
    clip = optax.clip_by_global_norm(max_grad_norm)

    def mean_loss(model, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).mean()

    losses = []
    for start in range(0, x.shape[0], window):
        loss, grads = nnx.value_and_grad(mean_loss)(
            model, x[start : start + window], labels[start : start + window]
        )
        grads, _ = clip.update(grads, clip.init(grads))
        params = nnx.state(model, nnx.Param)
        nnx.update(model, jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads))
        losses.append(loss)
    return jnp.array(losses)
