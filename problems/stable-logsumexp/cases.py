"""Cases for stable-logsumexp: rows at offsets in the hundreds or thousands, some
positive and some negative within one batch, so the literal formula overflows, one
maximum for the whole batch underflows, and a forgotten shift is far off; and rows
whose own logits spread by a thousand or more, where a shift by anything but the
row's maximum (its mean, its minimum) still overflows."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, b, c, spread, within=0.0, sample=False):
    """Rows at offsets up to ``spread`` apart; each row's logits spread by about
    ``within`` around its offset (3 standard deviations of noise when 0)."""
    rng = np.random.default_rng(6000 + draw)
    offsets = rng.uniform(-spread, spread, size=(b, 1))
    noise = rng.uniform(-within, within, size=(b, c)) if within else 3.0 * rng.normal(size=(b, c))
    return Case(name, sample=sample, args={"logits": (offsets + noise).astype(np.float32)})


def cases(seed):
    # Samples are fixed; every hidden case draws fresh logits for each seed
    # (one seed per variant, see docs/authoring.md "Hidden inputs change between submissions").
    fresh = 100 * (seed + 1)
    yield _case("moderate", draw=0, b=3, c=4, spread=2.0, sample=True)
    yield _case("large-offsets", draw=1, b=4, c=5, spread=900.0, sample=True)
    yield _case("wide", draw=2 + fresh, b=6, c=17, spread=1000.0)
    yield _case("wide-far-apart", draw=3 + fresh, b=6, c=17, spread=3000.0)
    yield _case("tall", draw=4 + fresh, b=11, c=3, spread=500.0)
    yield _case("tall-near-zero", draw=5 + fresh, b=11, c=3, spread=150.0)
    yield _case("spread-rows", draw=6 + fresh, b=5, c=9, spread=2000.0, within=1000.0)
    yield _case("spread-rows-again", draw=7 + fresh, b=5, c=9, spread=2000.0, within=1000.0)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""
    return {
        "far-from-zero": lambda args: float(np.abs(args["logits"]).max()) > 200.0,
        "rows-far-apart": lambda args: float(np.ptp(args["logits"].mean(axis=1))) > 200.0,
        "spread-within-a-row": lambda args: float(np.ptp(args["logits"], axis=1).min()) > 400.0,
    }
