# expect: wrong_answer
# diagnosis: momentum_swapped
# why: PyTorch's convention: mean <- (1 - m) mean + m mu_B, the momentum weighting the new batch instead of the running value
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
            mu, var = x.mean(axis=0), x.var(axis=0)
            self.mean[...] = (1 - m) * self.mean[...] + m * mu
            self.var[...] = (1 - m) * self.var[...] + m * var
        else:
            mu, var = self.mean[...], self.var[...]
        return (x - mu) / jnp.sqrt(var + 1e-5)


def standardize_stream(batches, eval_batch, momentum):
    module = RunningStandardizer(batches.shape[-1], momentum)
    train_outputs = jnp.stack([module(b, train=True) for b in batches])
    eval_output = module(eval_batch, train=False)
    return train_outputs, eval_output, module.mean[...], module.var[...]
