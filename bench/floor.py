"""The in-process floor of one submission: what its own code costs, nothing of ours.

One warm process (no sandbox), the children's XLA flags, the library warm-up done
first, as a pooled child has it. For each run: the cases' inputs put on the device,
the solution's source executed afresh (a new function: nothing compiled before is
reused), then every case of one
submission (the samples and probes, then one variant's hidden cases) called through
the child's own code path (grader/child/run.py ``_Loaded.call``: one program per
shape group, traced, lowered, compiled, run) and its outputs fetched to the host. The
time of that is the floor a grading cannot go below without skipping the learner's
compiles.

    .venv/bin/python -m bench.floor SLUG VARIANT [VARIANT ...]   (prints seconds as JSON)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from grader.config import PROJECT_ROOT
from grader.versions import xla_flags


def floor_seconds(slug: str, variants: list[int]) -> list[float]:
    """The floor of ``slug``'s reference, once per variant, in a fresh warm process."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.floor", slug, *map(str, variants)],
        check=True,
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, "XLA_FLAGS": xla_flags("cpu"), "JAX_PLATFORMS": "cpu"},
    )
    seconds: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds


def _measure(slug: str, variants: list[int]) -> list[float]:
    from grader.child import run
    from grader.child.protocol import JobMessage
    from grader.child.warmup import steps
    from grader.problems.problem import load_problem

    jax = run._import_runtime(libraries=True)
    for _ in steps():
        pass
    problem = load_problem(PROJECT_ROOT / "problems" / slug)
    bank = problem.case_bank
    job = JobMessage(
        entry_point=problem.parts[0].entry_point,
        n_outputs=len(problem.parts[0].outputs),
        max_elements=1 << 28,
        max_input_elements=1 << 28,
        cpu_seconds=3600,
        address_space_bytes=None,
        solutions=(),
        cases=(),
        compiled=True,
    )
    seconds = []
    for variant in variants:
        started = time.perf_counter()
        cases = [  # the inputs put on the device, as a child does with what it receives
            [run._on_device(value, jax.numpy) for value in case.args.values()]
            for case in (*bank.first_phase, *bank.for_variant(variant))
        ]
        namespace: dict[str, Any] = {"__name__": "submission"}
        exec(compile(problem.reference_source, "submission.py", "exec"), namespace)
        loaded = run._Loaded(0, "submission.py", namespace[problem.parts[0].entry_point])
        for args in cases:
            value, _program = loaded.call(args, job, None, compile_it=True)  # type: ignore[arg-type]
            jax.tree_util.tree_map(lambda leaf: jax.device_get(leaf), value)
        seconds.append(time.perf_counter() - started)
    return seconds


if __name__ == "__main__":
    print(json.dumps(_measure(sys.argv[1], [int(v) for v in sys.argv[2:]])))
