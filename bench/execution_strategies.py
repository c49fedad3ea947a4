"""Eager against whole-function jit for one problem's reference, in this process (not a
test): the cases of one submission (the samples and one variant's hidden cases),
after the library warm-up, each timed to its result. Set XLA_FLAGS to compare
compiler settings, e.g. XLA_FLAGS=--xla_backend_optimization_level=0.

    .venv/bin/python -m bench.execution_strategies nnx-grad-accumulation eager|jit|stages
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from grader.child.warmup import steps
from grader.config import PROJECT_ROOT
from grader.problems.problem import load_problem


def main() -> None:
    slug, strategy = sys.argv[1], sys.argv[2]
    problem = load_problem(PROJECT_ROOT / "problems" / slug)
    namespace: dict[str, Any] = {}
    exec(compile(problem.reference_source, "reference.py", "exec"), namespace)
    function: Callable[..., Any] = namespace[problem.parts[0].entry_point]
    for _ in steps():
        pass
    total = time.perf_counter()
    for case in [*problem.case_bank.samples, *problem.case_bank.for_variant(3)]:
        args = [v if isinstance(v, float) else jnp.asarray(v) for v in case.args.values()]
        started = time.perf_counter()
        static = tuple(i for i, a in enumerate(args) if isinstance(a, float) and a.is_integer())
        if strategy == "eager":
            out = function(*args)
        elif strategy == "stages":  # where a compiled case's time goes
            traced = jax.jit(function, static_argnums=static).trace(*args)
            t1 = time.perf_counter()
            lowered = traced.lower()
            t2 = time.perf_counter()
            compiled = lowered.compile()
            t3 = time.perf_counter()
            out = compiled(*[a for i, a in enumerate(args) if i not in static])
            print(f"  trace {t1 - started:.3f} s, lower {t2 - t1:.3f} s, compile {t3 - t2:.3f} s")
        else:
            out = jax.jit(function, static_argnums=static)(*args)
        jax.block_until_ready(out)  # type: ignore[no-untyped-call]
        print(f"{case.name}: {time.perf_counter() - started:.3f} s")
    print(f"total: {time.perf_counter() - total:.2f} s")


if __name__ == "__main__":
    main()
