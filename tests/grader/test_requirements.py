"""Structure and memory requirements (grader/requirements.py) and the evidence they are
judged on: the child's primitive walk, the ANALYSIS frame, the trusted-output cache.
Fast, no sandbox; the real sandboxed path is tests/problems/test_submissions.py
(ema-with-scan and memory-bounded-accumulation)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import expected, protocol
from grader.cases import Abstract, Case
from grader.child import primitive_names
from grader.config import PROJECT_ROOT
from grader.frames import FrameCollector
from grader.job import Analysis, Job, Solution
from grader.problem import load_problem
from grader.protocol import Kind
from grader.requirements import memory_growth, unmet_requirement

EMA = load_problem(PROJECT_ROOT / "problems" / "ema-with-scan")
MEMORY = load_problem(PROJECT_ROOT / "problems" / "memory-bounded-accumulation")


def test_a_scan_meets_the_structure_requirement() -> None:
    assert unmet_requirement(EMA, Analysis(primitives=frozenset({"scan", "mul", "add"}))) is None


def test_a_missing_scan_is_named_after_what_the_problem_asks() -> None:
    message = unmet_requirement(EMA, Analysis(primitives=frozenset({"mul", "add"})))
    assert message is not None
    assert message.startswith("This problem asks you to write the recurrence with lax.scan")
    assert message.endswith("Your function has no `scan`.")


def test_a_forbidden_primitive_is_named() -> None:
    message = unmet_requirement(EMA, Analysis(primitives=frozenset({"scan", "pure_callback"})))
    assert message is not None and "has `pure_callback`, which" in message


def test_a_nested_primitive_is_named_with_what_it_is_inside() -> None:
    problem = load_problem(PROJECT_ROOT / "problems" / "data-parallel-accumulation")
    evidence = frozenset({"shard_map", "scan", "psum_invariant", "scan>psum_invariant"})
    message = unmet_requirement(problem, Analysis(primitives=evidence))
    assert message is not None
    assert message.endswith(
        "has `psum_invariant` inside a `scan`, which this problem does not allow."
    )
    after_the_loop = frozenset({"shard_map", "scan", "psum_invariant", "shard_map>psum_invariant"})
    assert unmet_requirement(problem, Analysis(primitives=after_the_loop)) is None


def test_a_function_that_cannot_be_traced_does_not_meet_a_structure_requirement() -> None:
    message = unmet_requirement(
        EMA, Analysis(primitives=None, error="ConcretizationTypeError: Abstract tracer value\n")
    )
    assert message is not None and "ConcretizationTypeError" in message


def test_flat_memory_is_within_the_budget_and_growth_is_not() -> None:
    assert unmet_requirement(MEMORY, Analysis(temp_bytes=(17_028, 17_028, 17_100))) is None
    message = unmet_requirement(MEMORY, Analysis(temp_bytes=(4_096, 32_768, 262_144)))
    assert message is not None
    assert "grows 51.4x from probe 'batch-512' (4,096 bytes) to probe 'batch-32768'" in message


def test_tiny_byte_counts_do_not_make_a_large_growth() -> None:
    assert memory_growth((0, 300)) < 1.3
    assert memory_growth((4_096, 262_144)) > 50


def test_no_evidence_means_nothing_to_hold_against_the_learner() -> None:
    assert unmet_requirement(MEMORY, None) is None
    # A backend without memory analysis reports neither bytes nor an error.
    assert unmet_requirement(MEMORY, Analysis(temp_bytes=None)) is None


def test_the_primitive_walk_finds_a_scan_nested_in_jit_and_cond() -> None:
    def inner(x: Any) -> Any:
        return jax.lax.scan(lambda c, v: (c + v, c), 0.0, x)[0]

    def outer(x: Any) -> Any:
        return jax.lax.cond(x.sum() > 0, jax.jit(inner), lambda x: x.sum(), x)

    names = primitive_names(jax.make_jaxpr(outer)(jnp.ones(3)))
    assert {"scan", "cond", "cond>scan", "cond>add", "scan>add"} <= names
    assert "scan>cond" not in names


def test_a_python_loop_leaves_no_scan() -> None:
    def unrolled(x: Any) -> Any:
        total = 0.0
        for row in x:
            total = total + row
        return total

    assert "scan" not in primitive_names(jax.make_jaxpr(unrolled)(jnp.ones((4, 2))))


PROBE = Case("batch-8", {"x": Abstract((8, 2)), "m": 4.0})
JOB = Job(
    "solve",
    1,
    (Solution("s", "pass"),),
    (Case("sample", {"x": np.ones((2, 2), np.float32), "m": 1.0}, sample=True),),
    5.0,
    2048,
    trace_structure=True,
    memory_probes=(PROBE, PROBE),
)


def frames(*items: tuple[Kind, dict[str, Any]]) -> FrameCollector:
    collector = FrameCollector(max_elements=1000)
    collector.bind(JOB)
    stream = protocol.encode_frame(Kind.HELLO, {"backend": "cpu", "pid": 1})
    for kind, meta in items:
        stream += protocol.encode_frame(kind, meta)
    collector.read_all(io.BytesIO(stream), 1 << 20, lambda: None)
    return collector


GOOD = {"solution": 0, "primitives": ["scan"], "temp_bytes": [10, 20], "error": ""}
RESULT = {"solution": 0, "case": 0, "seconds": 0.1, "outputs": [{"invalid": "x"}]}


def test_the_analysis_frame_is_read_into_the_solution() -> None:
    collector = frames((Kind.ANALYSIS, GOOD), (Kind.CASE_RESULT, RESULT))
    assert collector.outcome.protocol_error is None
    assert collector.outcome.solutions[0].analysis == Analysis(frozenset({"scan"}), (10, 20), "")


@pytest.mark.parametrize(
    "items",
    [
        [(Kind.CASE_RESULT, RESULT)],  # a case before the analysis
        [(Kind.ANALYSIS, GOOD), (Kind.ANALYSIS, GOOD)],  # twice
        [(Kind.ANALYSIS, {**GOOD, "temp_bytes": [10]})],  # not one count per probe
        [(Kind.ANALYSIS, {**GOOD, "temp_bytes": [10, -1]})],
        [(Kind.ANALYSIS, {**GOOD, "primitives": "scan"})],
        [(Kind.ANALYSIS, {**GOOD, "primitives": ["x" * 500]})],
    ],
)
def test_malformed_or_misplaced_analysis_is_a_protocol_error(
    items: list[tuple[Kind, dict[str, Any]]],
) -> None:
    assert frames(*items).outcome.protocol_error


def test_memory_probes_travel_as_shapes_alone() -> None:
    meta, data = protocol.pack_cases([list(PROBE.args.values())])
    assert data == b""
    assert protocol.unpack_cases(meta, data, max_elements=0) == [[Abstract((8, 2)), 4.0]]


def test_trusted_analyses_survive_the_disk_cache(tmp_path: Path) -> None:
    trusted = expected.TrustedOutputs(
        reference={"sample": [np.zeros(2, np.float32)]},
        analyses={
            "reference": Analysis(frozenset({"scan"}), (5, 5), ""),
            "python_loop": Analysis(frozenset(), None, "TypeError: no\n"),
        },
    )
    expected._save(tmp_path / "cache.npz", trusted)
    assert expected._load(tmp_path / "cache.npz").analyses == trusted.analyses
