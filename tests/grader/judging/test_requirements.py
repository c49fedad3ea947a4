"""Structure and memory requirements (grader/judging/requirements.py), judged on the programs
that answered the cases: fast, no sandbox, evidence built by hand or by the child's
own analysis functions in this process. The real sandboxed path (and the attacks
that once fooled a separate analysis) is tests/hostile/test_requirement_attacks.py
and tests/problems/test_submissions.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from grader import expected
from grader.child import run as child
from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT
from grader.judging.job import CaseOutcome, Program, SolutionOutcome
from grader.judging.requirements import memory_growth, unmet_requirement
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Problem, load_problem

EMA = load_problem(PROJECT_ROOT / "problems" / "ema-with-scan")
MEMORY = load_problem(PROJECT_ROOT / "problems" / "memory-bounded-accumulation")
PARALLEL = load_problem(PROJECT_ROOT / "problems" / "data-parallel-accumulation")


def answered_by(*programs: Program, cases: list[int] | None = None) -> SolutionOutcome:
    """A solution whose case i was answered by program ``cases[i]`` (default: i)."""
    which = cases if cases is not None else list(range(len(programs)))
    return SolutionOutcome(
        cases={i: CaseOutcome(0.1, program=p) for i, p in enumerate(which)},
        programs=list(programs),
    )


def unmet(problem: Problem, solution: SolutionOutcome, probes: list[int] = []) -> str | None:  # noqa: B006
    return unmet_requirement(problem, solution, range(len(solution.cases)), probes)


def compiled(**counts: int) -> Program:
    return Program(primitives={k.replace("__", ">"): v for k, v in counts.items()}, temp_bytes=64)


def test_a_loop_meets_a_loop_requirement_whatever_its_primitive() -> None:
    assert unmet(EMA, answered_by(compiled(scan=1, mul=2))) is None
    assert unmet(EMA, answered_by(compiled(**{"while": 1}))) is None


def test_a_missing_loop_is_named_after_what_the_problem_asks() -> None:
    message = unmet(EMA, answered_by(compiled(mul=30, add=30)))
    assert message is not None
    assert message.startswith("This problem asks you to write the recurrence as a loop")
    assert message.endswith("Your function has no loop (`scan`, `fori_loop`, `while_loop`).")


def test_every_program_must_meet_it_not_only_the_first() -> None:
    # A loop for the samples' shapes, a Python loop for the hidden ones.
    solution = answered_by(compiled(scan=1), Program(primitives={"add": 9}, hidden=True))
    message = unmet(EMA, solution)
    assert message is not None and message.startswith("For a hidden case's input shapes:")


def test_a_hidden_programs_failure_says_the_rule_and_nothing_the_program_chose() -> None:
    said = [
        unmet(PARALLEL, answered_by(Program(primitives=counts, hidden=True)))
        for counts in (
            {"shard_map": 1, "psum": 1, "scan": 1, "scan>psum": 1},
            {"shard_map": 1, "pmax": 1, "while": 1, "while>pmax": 1},
        )
    ]
    assert said[0] == said[1] and said[0] is not None
    assert "a cross-device reduction (`psum`, `pmean`, ...) inside a loop" in said[0]


def test_a_reduction_inside_any_loop_is_refused_by_intent() -> None:
    for loop in ("scan", "while"):
        for reduction in ("psum", "psum_invariant", "pmax"):
            counts = {"shard_map": 1, loop: 1, reduction: 1, f"{loop}>{reduction}": 1}
            message = unmet(PARALLEL, answered_by(Program(primitives=counts)))
            assert message is not None, (loop, reduction)
            assert f"a `{reduction}` inside a `{loop}`" in message


def test_exactly_one_reduction_catches_one_per_unrolled_micro_batch() -> None:
    once = {"shard_map": 1, "scan": 1, "psum": 1}
    assert unmet(PARALLEL, answered_by(Program(primitives=once))) is None
    unrolled = {"shard_map": 1, "psum_invariant": 4}
    message = unmet(PARALLEL, answered_by(Program(primitives=unrolled)))
    assert message is not None and "has 4 cross-device reduction" in message


def test_host_callbacks_are_refused_wherever_a_requirement_exists() -> None:
    message = unmet(EMA, answered_by(compiled(scan=1, pure_callback=1)))
    assert message is not None and "`pure_callback`" in message
    message = unmet(MEMORY, answered_by(compiled(io_callback=1)), probes=[0])
    assert message is not None and "Host callbacks" in message


def test_code_that_ran_op_by_op_does_not_meet_a_structure_requirement() -> None:
    eager = Program(primitives=None, error="ConcretizationTypeError: Abstract tracer value\n")
    message = unmet(EMA, answered_by(eager))
    assert message is not None and "could not be compiled" in message
    assert "ConcretizationTypeError" in message
    hidden = Program(primitives=None, error="ValueError: 0.123456", hidden=True)
    message = unmet(EMA, answered_by(hidden))
    assert message is not None and "0.123456" not in message


def probes(*temp: int | None) -> SolutionOutcome:
    return answered_by(*(Program(primitives={"scan": 1}, temp_bytes=t) for t in temp))


def test_flat_memory_is_within_the_budget_and_growth_is_not() -> None:
    assert unmet(MEMORY, probes(17_028, 17_028, 17_100), [0, 1, 2]) is None
    message = unmet(MEMORY, probes(4_096, 32_768, 262_144), [0, 1, 2])
    assert message is not None
    assert "grows 51.4x from probe 'batch-512' (4,096 bytes) to probe 'batch-32768'" in message


def test_memory_that_was_not_measured_does_not_meet_the_budget() -> None:
    message = unmet(MEMORY, probes(17_028, None, 17_028), [0, 1, 2])
    assert message is not None and "could not be measured" in message


def test_tiny_byte_counts_do_not_make_a_large_growth() -> None:
    assert memory_growth((0, 300)) < 1.3
    assert memory_growth((4_096, 262_144)) > 50


def test_no_cases_or_a_solution_that_did_not_load_has_nothing_to_hold() -> None:
    assert unmet(EMA, SolutionOutcome()) is None
    failed = answered_by(compiled(add=1))
    assert unmet(EMA, failed) is not None
    failed.error_verdict = Verdict.SYNTAX_ERROR  # its own verdict says it all
    assert unmet(EMA, failed) is None


def counted(function: Any, *args: Any) -> dict[str, int]:
    """What the child reports of a function: its traced jaxpr, dead code removed."""
    child._TOOLS.update(child._analysis_tools(jax))
    traced = jax.jit(function).trace(*args)
    return child.primitive_counts(child._dead_code_removed(traced.jaxpr))


def test_the_primitive_walk_finds_a_scan_nested_in_jit_and_cond() -> None:
    def inner(x: Any) -> Any:
        return jax.lax.scan(lambda c, v: (c + v, c), 0.0, x)[0]

    def outer(x: Any) -> Any:
        return jax.lax.cond(x.sum() > 0, jax.jit(inner), lambda x: x.sum(), x)

    names = counted(outer, jnp.ones(3))
    assert {"scan", "cond", "cond>scan", "cond>add", "scan>add"} <= set(names)
    assert "scan>cond" not in names


def test_a_python_loop_leaves_no_scan_and_a_fori_loop_leaves_one() -> None:
    def unrolled(x: Any) -> Any:
        total = 0.0
        for row in x:
            total = total + row
        return total

    def fori(x: Any) -> Any:
        return jax.lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i], jnp.zeros(x.shape[1]))

    assert "scan" not in counted(unrolled, jnp.ones((4, 2)))
    assert counted(fori, jnp.ones((4, 2)))["scan"] == 1


def test_trusted_verdicts_on_requirements_survive_the_disk_cache(tmp_path: Path) -> None:
    trusted = TrustedOutputs(
        reference={"sample": [np.zeros(2, np.float32)]},
        unmet={"python_loop": "This problem asks ... Your function has no loop."},
    )
    expected._save(tmp_path / "cache.npz", trusted)
    assert expected._load(tmp_path / "cache.npz").unmet == trusted.unmet
