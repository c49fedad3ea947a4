"""You add the 1e-5 to the standard deviation, not to the variance: standardize with (x - mean) / sqrt(var + 1e-5); the two differ wherever a feature's variance is small."""

import jax.numpy as jnp
from flax import nnx


class RunningStandardizer(nnx.Module):
    def __init__(self, features, momentum):
        self.mean = nnx.BatchStat(jnp.zeros(features))
        self.var = nnx.BatchStat(jnp.ones(features))
        self.momentum = momentum

    def __call__(self, x, *, train):
        if train:
            mean, var = x.mean(axis=0), x.var(axis=0)
            m = self.momentum
            self.mean[...] = m * self.mean[...] + (1 - m) * mean
            self.var[...] = m * self.var[...] + (1 - m) * var
        else:
            mean, var = self.mean[...], self.var[...]
        return (x - mean) / (jnp.sqrt(var) + 1e-5)


def standardize_stream(batches, eval_batch, momentum):
    module = RunningStandardizer(batches.shape[-1], momentum)
    train_outputs = jnp.stack([module(b, train=True) for b in batches])
    eval_output = module(eval_batch, train=False)
    return train_outputs, eval_output, module.mean[...], module.var[...]
