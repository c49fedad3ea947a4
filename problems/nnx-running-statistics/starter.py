import jax.numpy as jnp
from flax import nnx


class RunningStandardizer(nnx.Module):
    def __init__(self, features, momentum):
        self.mean = nnx.BatchStat(jnp.zeros(features))
        self.var = nnx.BatchStat(jnp.ones(features))
        self.momentum = momentum

    def __call__(self, x, *, train):
        # TODO: batch statistics and an update when training; running ones otherwise.
        return (x - self.mean[...]) / jnp.sqrt(self.var[...] + 1e-5)


def standardize_stream(batches, eval_batch, momentum):
    module = RunningStandardizer(batches.shape[-1], momentum)
    train_outputs = jnp.stack([module(b, train=True) for b in batches])
    eval_output = module(eval_batch, train=False)
    return train_outputs, eval_output, module.mean[...], module.var[...]
