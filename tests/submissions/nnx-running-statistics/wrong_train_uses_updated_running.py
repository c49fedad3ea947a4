# expect: wrong_answer
# diagnosis: train_running_statistics
# why: in training, standardizes with the running statistics just updated instead of the batch's own
import jax.numpy as jnp
from flax import nnx


class RunningStandardizer(nnx.Module):
    def __init__(self, features, momentum):
        self.mean = nnx.BatchStat(jnp.zeros(features))
        self.var = nnx.BatchStat(jnp.ones(features))
        self.momentum = momentum

    def __call__(self, x, *, train):
        m = self.momentum
        if train:
            self.mean[...] = m * self.mean[...] + (1 - m) * x.mean(axis=0)
            self.var[...] = m * self.var[...] + (1 - m) * x.var(axis=0)
        return (x - self.mean[...]) / jnp.sqrt(self.var[...] + 1e-5)


def standardize_stream(batches, eval_batch, momentum):
    module = RunningStandardizer(batches.shape[-1], momentum)
    train_outputs = jnp.stack([module(b, train=True) for b in batches])
    eval_output = module(eval_batch, train=False)
    return train_outputs, eval_output, module.mean[...], module.var[...]
