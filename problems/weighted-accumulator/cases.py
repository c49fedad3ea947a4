"""Cases for weighted-accumulator: each of the three parts on its own, with trees the
samples do not show, accumulators already partway through a window, and weights that
are not whole numbers (so a total weight never equals a count of micro-batches)."""

import numpy as np

from grader.cases import Case

# Tree layouts: leaf shapes by key. The hidden ones are not shown by any sample.
ONE_LAYER = {"dense": {"kernel": (2, 3), "bias": (3,)}}
FLAT = {"w": (4,), "b": (1,)}
TWO_LAYERS = {"encoder": {"kernel": (5, 4), "bias": (4,)}, "head": {"kernel": (4, 2), "bias": (2,)}}
EMBEDDING = {"embedding": (6, 3), "scale": (3,)}


def _tree(rng, layout, scale=1.0):
    return {
        key: _tree(rng, shape, scale)
        if isinstance(shape, dict)
        else (scale * rng.normal(size=shape)).astype(np.float32)
        for key, shape in layout.items()
    }


def _scalar(value):
    return np.array(value, dtype=np.float32)


def _fraction(rng, low, high):
    """A weight that is not a whole number (a whole one would hide a count)."""
    value = round(float(rng.uniform(low, high)), 3)
    return value + 0.5 if value.is_integer() else value


def _accumulator(rng, layout, count):
    """An accumulator holding ``count`` earlier micro-batches (empty when 0): its total
    weight is well away from its count, both ways."""
    if count == 0:
        return {"sum": _tree(rng, layout, 0.0), "weight": _scalar(0.0), "count": _scalar(0.0)}
    factor = _fraction(rng, 1.7, 3.2) if rng.uniform() < 0.5 else _fraction(rng, 0.2, 0.55)
    return {
        "sum": _tree(rng, layout, 2.0),
        "weight": _scalar(count * factor),
        "count": _scalar(float(count)),
    }


def _init(name, *, draw, layout, sample=False):
    rng = np.random.default_rng(23000 + draw)
    return Case(name, part="init", sample=sample, args={"params": _tree(rng, layout)})


def _accumulate(name, *, draw, layout, count, weight=None, sample=False):
    rng = np.random.default_rng(23000 + draw)
    acc = _accumulator(rng, layout, count)
    args = {
        "acc": acc,
        "grads": _tree(rng, layout),
        "weight": weight if weight is not None else _fraction(rng, 0.2, 4.0),
    }
    return Case(name, part="accumulate", sample=sample, args=args)


def _average(name, *, draw, layout, count, sample=False):
    rng = np.random.default_rng(23000 + draw)
    return Case(name, part="average", sample=sample, args={"acc": _accumulator(rng, layout, count)})


def cases(seed):
    fresh = 100 * (seed + 1)
    count = int(np.random.default_rng([seed, 23]).integers(2, 9))
    # Samples: the same for every seed.
    yield _init("init-one-layer", draw=0, layout=ONE_LAYER, sample=True)
    yield _accumulate(
        "first-microbatch", draw=1, layout=ONE_LAYER, count=0, weight=3.0, sample=True
    )
    yield _accumulate("third-microbatch", draw=2, layout=FLAT, count=2, weight=0.75, sample=True)
    yield _average("average-flat", draw=3, layout=FLAT, count=3, sample=True)
    # Hidden: fresh values (and counts) for every seed.
    yield _init("init-two-layers", draw=4 + fresh, layout=TWO_LAYERS)
    yield _init("init-embedding", draw=5 + fresh, layout=EMBEDDING)
    yield _accumulate("add-to-two-layers", draw=6 + fresh, layout=TWO_LAYERS, count=count)
    yield _accumulate("add-to-two-layers-again", draw=7 + fresh, layout=TWO_LAYERS, count=count + 1)
    yield _accumulate("add-to-embedding", draw=8 + fresh, layout=EMBEDDING, count=1)
    yield _average("average-two-layers", draw=9 + fresh, layout=TWO_LAYERS, count=count)
    yield _average("average-embedding", draw=10 + fresh, layout=EMBEDDING, count=count + 2)


def _several_layers(tree):
    return len(tree) >= 2 and all(isinstance(layer, dict) for layer in tree.values())


def _weights_not_counts(args):
    if "weight" in args:  # accumulate: the micro-batch's own weight
        return args["weight"] != 1.0
    acc = args.get("acc")  # average: the total so far
    return acc is not None and float(acc["weight"]) != float(acc["count"])


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case of any part."""
    return {
        "weights-not-counts": _weights_not_counts,
        "nested-trees": lambda args: _several_layers(
            args["params"] if "params" in args else args["acc"]["sum"]
        ),
        "partly-filled": lambda args: "acc" in args and float(args["acc"]["count"]) > 0,
    }
