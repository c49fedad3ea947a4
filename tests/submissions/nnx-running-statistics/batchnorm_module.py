# expect: accepted
# why: Flax's own nnx.BatchNorm without scale and bias (use_running_average = not train, epsilon 1e-5); its statistics are the module's batch_stats
import jax.numpy as jnp
from flax import nnx


def standardize_stream(batches, eval_batch, momentum):
    norm = nnx.BatchNorm(
        batches.shape[-1],
        momentum=momentum,
        epsilon=1e-5,
        use_bias=False,
        use_scale=False,
        rngs=nnx.Rngs(0),
    )
    train_outputs = jnp.stack([norm(b, use_running_average=False) for b in batches])
    eval_output = norm(eval_batch, use_running_average=True)
    return train_outputs, eval_output, norm.mean[...], norm.var[...]
