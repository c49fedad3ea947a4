"""Cases for stable-logsumexp: rows at offsets in the hundreds or thousands, some
positive and some negative within one batch, so the literal formula overflows, one
maximum for the whole batch underflows, and a forgotten shift is far off."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, b, c, spread, sample=False):
    rng = np.random.default_rng(6000 + draw)
    offsets = rng.uniform(-spread, spread, size=(b, 1))
    logits = offsets + 3.0 * rng.normal(size=(b, c))
    return Case(name, sample=sample, args={"logits": logits.astype(np.float32)})


def cases(seed):
    # Samples are fixed; every hidden case draws fresh logits for each seed
    # (one seed per variant, see README.md "Hidden inputs").
    fresh = 100 * (seed + 1)
    yield _case("moderate", draw=0, b=3, c=4, spread=2.0, sample=True)
    yield _case("large-offsets", draw=1, b=4, c=5, spread=900.0, sample=True)
    yield _case("wide", draw=2 + fresh, b=6, c=17, spread=1000.0)
    yield _case("wide-far-apart", draw=3 + fresh, b=6, c=17, spread=3000.0)
    yield _case("tall", draw=4 + fresh, b=11, c=3, spread=500.0)
    yield _case("tall-near-zero", draw=5 + fresh, b=11, c=3, spread=150.0)
