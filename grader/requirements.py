"""Requirements on how a solution is built, not on what it returns.

A problem may ask (problem.toml) that the learner's function contain some
primitives and not others (``[structure]``: accumulate with ``scan``, no host
callbacks), or that its compiled temporary memory not grow with the batch
(``[memory_budget]``: gradient accumulation exists to save memory). The child
traces the function on the first sample (``jax.make_jaxpr``) and compiles it at
each memory probe's shapes (``.lower(...).compile().memory_analysis()``) before
running any case, and reports both in an ANALYSIS frame; this module turns that
evidence into a verdict, ``requirement_not_met``, with a message that says what
was asked and what was found.

This is pedagogy, not a security boundary: the evidence is computed in the
learner's own sandbox, by code their module could have patched at import. A
learner who fakes it fools only the lesson; every output is still compared with
the reference on hidden inputs (docs/security.md).
"""

from __future__ import annotations

from grader.job import Analysis
from grader.problem import Problem

# Added to both byte counts before taking their ratio, so that a few hundred bytes
# at the smallest probe do not turn a flat profile into a large "growth".
GROWTH_FLOOR_BYTES = 1024


def memory_growth(temp_bytes: tuple[int, ...]) -> float:
    """Temporary bytes at the largest probe over those at the smallest (both floored)."""
    return (temp_bytes[-1] + GROWTH_FLOOR_BYTES) / (temp_bytes[0] + GROWTH_FLOOR_BYTES)


def _shown(name: str) -> str:
    """``scan>psum`` as people read it: a `psum` inside a `scan`."""
    *outer, inner = name.split(">")
    return f"`{inner}`" + "".join(f" inside a `{o}`" for o in reversed(outer))


def _structure(problem: Problem, analysis: Analysis) -> str | None:
    structure = problem.config.structure
    if structure is None:
        return None
    if analysis.primitives is None:
        return (
            f"{structure.explanation} Its structure could not be checked: tracing your"
            f" function with jax.make_jaxpr on the first sample failed: {analysis.error.strip()}"
        )
    missing = [name for name in structure.require if name not in analysis.primitives]
    if missing:
        listed = ", ".join(_shown(name) for name in missing)
        return f"{structure.explanation} Your function has no {listed}."
    used = [name for name in structure.forbid if name in analysis.primitives]
    if used:
        listed = ", ".join(_shown(name) for name in used)
        return f"{structure.explanation} Your function has {listed}, which this problem does not allow."
    return None


def _memory(problem: Problem, analysis: Analysis) -> str | None:
    budget = problem.config.memory_budget
    if budget is None:
        return None
    if analysis.temp_bytes is None:
        if analysis.error:
            return (
                f"{budget.explanation} Its memory could not be measured: compiling your function"
                f" at the probe shapes failed: {analysis.error.strip()}"
            )
        return None  # this backend has no memory analysis: nothing to hold against the learner
    growth = memory_growth(analysis.temp_bytes)
    if growth <= budget.max_growth:
        return None
    probes = problem.memory_probes
    return (
        f"{budget.explanation} Your compiled function's temporary memory grows {growth:.1f}x"
        f" from probe {probes[0].name!r} ({analysis.temp_bytes[0]:,} bytes) to probe"
        f" {probes[-1].name!r} ({analysis.temp_bytes[-1]:,} bytes); at most"
        f" {budget.max_growth:g}x is allowed."
    )


def unmet_requirement(problem: Problem, analysis: Analysis | None) -> str | None:
    """Why the solution does not meet the problem's requirements, or None when it does
    (or when there is nothing to check, or no evidence because the run stopped early)."""
    if analysis is None:
        return None
    return _structure(problem, analysis) or _memory(problem, analysis)
