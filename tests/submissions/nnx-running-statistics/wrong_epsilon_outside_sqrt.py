# expect: wrong_answer
# diagnosis: epsilon_outside_sqrt
# why: divides by sqrt(var) + 1e-5 instead of sqrt(var + 1e-5): far off for a feature whose variance is small
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
            mu, var = jnp.mean(x, axis=0), jnp.var(x, axis=0)
            self.mean[...] = m * self.mean[...] + (1 - m) * mu
            self.var[...] = m * self.var[...] + (1 - m) * var
        else:
            mu, var = self.mean[...], self.var[...]
        return (x - mu) / (jnp.sqrt(var) + 1e-5)


def standardize_stream(batches, eval_batch, momentum):
    module = RunningStandardizer(batches.shape[-1], momentum)
    train_outputs = jnp.stack([module(b, train=True) for b in batches])
    eval_output = module(eval_batch, train=False)
    return train_outputs, eval_output, module.mean[...], module.var[...]
