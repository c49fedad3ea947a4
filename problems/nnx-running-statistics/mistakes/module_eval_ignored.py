"""You call module.eval() and leave train at its default True: eval() only sets attributes such as use_running_average, which your __call__ never reads; pass train=False."""

import jax.numpy as jnp
from flax import nnx


class RunningStandardizer(nnx.Module):
    def __init__(self, features, momentum):
        self.mean = nnx.BatchStat(jnp.zeros(features))
        self.var = nnx.BatchStat(jnp.ones(features))
        self.momentum = momentum

    def __call__(self, x, *, train=True):
        if train:
            mean, var = x.mean(axis=0), x.var(axis=0)
            m = self.momentum
            self.mean[...] = m * self.mean[...] + (1 - m) * mean
            self.var[...] = m * self.var[...] + (1 - m) * var
        else:
            mean, var = self.mean[...], self.var[...]
        return (x - mean) / jnp.sqrt(var + 1e-5)


def standardize_stream(batches, eval_batch, momentum):
    module = RunningStandardizer(batches.shape[-1], momentum)
    module.train()
    train_outputs = jnp.stack([module(b) for b in batches])
    module.eval()
    eval_output = module(eval_batch)
    return train_outputs, eval_output, module.mean[...], module.var[...]
