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
    losses = []
    # TODO: micro-batches, windows, example-weighted accumulation, one update per window.
    return jnp.array(losses)
