"""Cases for memory-bounded-accumulation: a tanh unit's full-batch gradient, computed
by micro-batches; memory probes at growing batch sizes with one micro-batch size."""

import numpy as np

from grader.cases import Case


def _case(name, *, draw, n, m, f, sample=False):
    rng = np.random.default_rng(9000 + draw)
    return Case(
        name,
        sample=sample,
        args={
            "w": (0.4 * rng.normal(size=(f,))).astype(np.float32),
            "x_full": rng.normal(size=(n, f)).astype(np.float32),
            "y_full": rng.uniform(-1.0, 1.0, size=(n,)).astype(np.float32),
            "micro_batch_size": float(m),
        },
    )


def cases(seed):
    fresh = 100 * (seed + 1)
    yield _case("four-by-two", draw=0, n=8, m=2, f=3, sample=True)
    yield _case("two-by-three", draw=1, n=6, m=3, f=2, sample=True)
    yield _case("six-chunks", draw=2 + fresh, n=96, m=16, f=8)
    yield _case("six-chunks-again", draw=3 + fresh, n=96, m=16, f=8)
    yield _case("many-chunks", draw=4 + fresh, n=60, m=5, f=5)
    yield _case("many-chunks-again", draw=5 + fresh, n=60, m=5, f=5)


def memory_probes():
    # The batch grows 64x, the micro-batch stays 64: flat memory or not. Probes run
    # and are graded like any case; their memory is that of the programs that answered.
    for n in (512, 4096, 32768):
        yield _case(f"batch-{n}", draw=7000 + n, n=n, m=64, f=64)


def regimes():
    """The kinds of input the statement promises, each as a predicate on a case."""

    def count(args):
        return args["x_full"].shape[0] // int(args["micro_batch_size"])

    return {
        "many-micro-batches": lambda args: count(args) >= 6,
        "count-not-size": lambda args: count(args) != int(args["micro_batch_size"]),
        "tanh-curved": lambda args: float(np.mean(np.abs(args["x_full"] @ args["w"]) > 1.0)) > 0.2,
    }
