"""Requirements on how a solution is built, read from the programs that answered.

A problem may ask (problem.toml) that the learner's function be built a certain way
(``[structure]``: accumulate with a loop, reduce across devices once and not inside
the loop) or that its temporary memory not grow with the batch (``[memory_budget]``:
gradient accumulation exists to save memory). The child compiles each shape group of
cases once (``jit(f).trace(...)``), reads the jaxpr of that trace after dead-code
elimination, compiles that very trace and answers every case of the group with the
executable (grader/child/run.py): so what is checked is exactly what produced the graded
outputs. Code that behaves one way when analysed and another when graded has no
second program to hide in; a ``lax.scan`` whose result is unused is not there.

The rules, and what fails them:

- every program that answered a case must satisfy ``require``, ``forbid`` and
  ``exactly`` (``[structure]``); one the solution could not be compiled into (it ran
  op by op) does not meet a structure or memory requirement;
- host callbacks (``pure_callback``, ``io_callback``, ``ffi_call``) are forbidden
  wherever a requirement exists, unless the problem allows them: they hide a
  computation from the jaxpr and from XLA's memory analysis;
- the memory budget compares the temporary bytes of the programs that answered the
  memory probes (cases.py ``memory_probes()``, run with the samples); a probe whose
  memory could not be measured fails it ("not measured" is not "met").

Terms name primitives or the concepts below, so that a rule states an intent, not
one spelling of it (``loop>cross_device_reduction`` holds for a ``psum`` in a ``scan``
and a ``pmean`` in a ``while_loop`` alike).

What a learner reads of a program analysed after the hidden inputs reached the child
is only which rule it broke (in the problem's own words), never a name or number the
program chose. The evidence is computed in the learner's own sandbox, with tools the
child took before learner code ran; docs/security.md says what that does and does not
guarantee.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from grader.judging.job import Program, SolutionOutcome
from grader.problems.problem import Problem, StructureConfig

# Added to both byte counts before taking their ratio, so that a few hundred bytes
# at the smallest probe do not turn a flat profile into a large "growth".
GROWTH_FLOOR_BYTES = 1024

CONCEPTS: dict[str, frozenset[str]] = {
    # lax.scan, lax.map and fori_loop with static bounds are scans; while_loop and a
    # fori_loop with traced bounds are whiles.
    "loop": frozenset({"scan", "while"}),
    "cross_device_reduction": frozenset(
        {
            "psum",
            "pmax",
            "pmin",
            "psum_invariant",
            "reduce_scatter",
            "unreduced_psum",
            "unreduced_reduce_scatter",
        }
    ),
    "host_callback": frozenset({"pure_callback", "io_callback", "ffi_call", "buffer_callback"}),
}
READABLE: dict[str, str] = {
    "loop": "a loop (`scan`, `fori_loop`, `while_loop`)",
    "cross_device_reduction": "a cross-device reduction (`psum`, `pmean`, ...)",
    "host_callback": "a host callback (`pure_callback`, `io_callback`, ...)",
}
CALLBACK_EXPLANATION = (
    "Host callbacks (pure_callback, io_callback) hide a computation from the compiled"
    " program this problem's requirements are read from, so this problem does not allow them."
)


def memory_growth(temp_bytes: tuple[int, ...]) -> float:
    """Temporary bytes at the largest probe over those at the smallest (both floored)."""
    return (temp_bytes[-1] + GROWTH_FLOOR_BYTES) / (temp_bytes[0] + GROWTH_FLOOR_BYTES)


def _members(term: str) -> frozenset[str]:
    return CONCEPTS.get(term, frozenset({term}))


def _count(counts: dict[str, int], term: str) -> int:
    """How often ``term`` (a name, a concept, or outer>inner) occurs in a program."""
    *outer, inner = term.split(">")
    if not outer:
        return sum(counts.get(name, 0) for name in _members(inner))
    found = 0
    for key, count in counts.items():
        parts = key.split(">")
        if len(parts) == 2 and parts[1] in _members(inner) and parts[0] in _members(outer[-1]):
            found += count
    return found


def _said(term: str) -> str:
    """A term as people read it: ``loop>cross_device_reduction`` as "a cross-device
    reduction (...) inside a loop (...)", ``scan>psum`` as "a `psum` inside a `scan`"."""
    parts = term.split(">")
    shown = [READABLE.get(part, f"a `{part}`") for part in reversed(parts)]
    return " inside ".join(shown)


def _none_of(term: str) -> str:
    """ "no loop (...)", "no `shard_map`": what a required term's absence reads as."""
    return "no " + _said(term).removeprefix("a ")


def _found(counts: dict[str, int], term: str) -> str:
    """Which primitives of a term a program has (phase-one programs only: their names
    are the learner's to see)."""
    *outer, inner = term.split(">")
    names = sorted(
        key
        for key in counts
        if (len(key.split(">")) == 2 if outer else ">" not in key)
        and key.split(">")[-1] in _members(inner)
        and (not outer or key.split(">")[0] in _members(outer[-1]))
    )
    readable = [
        f"a `{name.split('>')[1]}` inside a `{name.split('>')[0]}`" if ">" in name else f"`{name}`"
        for name in names
    ]
    return ", ".join(readable[:4])


@dataclass(frozen=True)
class _Broken:
    """One rule a program breaks: the generic words, and the detailed ones."""

    rule: str
    detail: str


def _structure_breaks(
    structure: StructureConfig | None, forbid_callbacks: bool, counts: dict[str, int]
) -> _Broken | None:
    if forbid_callbacks and _count(counts, "host_callback"):
        found = _found(counts, "host_callback")
        return _Broken(
            f"{CALLBACK_EXPLANATION} It calls {_said('host_callback')}.",
            f"{CALLBACK_EXPLANATION} Your function has {found}.",
        )
    if structure is None:
        return None
    for term in structure.require:
        if not _count(counts, term):
            words = f"{structure.explanation} Your function has {_none_of(term)}."
            return _Broken(words, words)
    for term in structure.forbid:
        if _count(counts, term):
            said = f"{structure.explanation} Your function has {_said(term)}, which this problem does not allow."
            found = _found(counts, term)
            detail = f"{structure.explanation} Your function has {found or _said(term)}, which this problem does not allow."
            return _Broken(said, detail)
    for term, wanted in structure.exactly.items():
        got = _count(counts, term)
        if got != wanted:
            what = _said(term).removeprefix("a ")
            said = f"{structure.explanation} Your function does not have exactly {wanted} {what}."
            detail = f"{structure.explanation} Your function has {got} {what}, where exactly {wanted} {'is' if wanted == 1 else 'are'} asked for."
            return _Broken(said, detail)
    return None


def _untraced(problem: Problem, program: Program) -> str:
    what = "requirements are" if problem.config.memory_budget else "requirement is"
    where = (
        "for a hidden case's input shapes"
        if program.hidden
        else "with jax.jit on the samples' or probes' inputs"
    )
    because = f": {program.error.strip()}" if program.error and not program.hidden else ""
    return (
        f"{_explanation(problem)} This problem's {what} read from your compiled function,"
        f" and it could not be compiled {where}{because}"
    )


def _explanation(problem: Problem) -> str:
    rule = problem.config.structure or problem.config.memory_budget
    return rule.explanation if rule is not None else ""


def _used_programs(solution: SolutionOutcome, positions: Iterable[int]) -> list[Program]:
    """The programs that answered the cases at ``positions``, each once, in order."""
    used: list[int] = []
    for position in positions:
        case = solution.cases.get(position)
        if case is not None and case.program is not None and case.program not in used:
            used.append(case.program)
    return [solution.programs[index] for index in used if index < len(solution.programs)]


def _structure(problem: Problem, programs: list[Program]) -> str | None:
    forbid_callbacks = not problem.config.allow_host_callbacks
    for program in programs:
        if program.primitives is None:
            return _untraced(problem, program)
        broken = _structure_breaks(problem.config.structure, forbid_callbacks, program.primitives)
        if broken is not None:
            if program.hidden:
                return f"For a hidden case's input shapes: {broken.rule}"
            return broken.detail
    return None


def _memory(problem: Problem, solution: SolutionOutcome, probes: list[int]) -> str | None:
    budget = problem.config.memory_budget
    if budget is None:
        return None
    measured: list[int] = []
    for position in probes:
        programs = _used_programs(solution, [position])
        if not programs or programs[0].temp_bytes is None:
            if programs and programs[0].primitives is None:
                return _untraced(problem, programs[0])
            return (
                f"{budget.explanation} The temporary memory of the program that answered"
                " every memory probe could not be measured, and a requirement that cannot"
                " be measured is not met."
            )
        measured.append(programs[0].temp_bytes)
    growth = memory_growth(tuple(measured))
    if growth <= budget.max_growth:
        return None
    names = [case.name for case in problem.case_bank.probes]
    return (
        f"{budget.explanation} Your compiled function's temporary memory grows {growth:.1f}x"
        f" from probe {names[0]!r} ({measured[0]:,} bytes) to probe {names[-1]!r}"
        f" ({measured[-1]:,} bytes); at most {budget.max_growth:g}x is allowed."
    )


def unmet_requirement(
    problem: Problem,
    solution: SolutionOutcome,
    positions: Iterable[int],
    probes: list[int],
) -> str | None:
    """Why the solution does not meet the problem's requirements, or None when it does
    (or when there is nothing to check, or no evidence because it failed to load or
    never answered a case). ``positions``: the cases whose programs are checked (a
    learner's: all; a trusted run: its samples and probes); ``probes``: the memory
    probes' positions, smallest first."""
    if not problem.has_requirements or solution.error_verdict:
        return None
    programs = _used_programs(solution, positions)
    if not programs:
        return None
    return _structure(problem, programs) or _memory(problem, solution, probes)
