"""Test cases: the author's API (``Case``) and the loader for ``cases.py``.

A problem's ``cases.py`` defines ``cases(seed)`` returning ``Case`` objects.
jaxjudge calls it once per *variant*, with ``seed`` = 0, 1, ..., ``variants``
- 1 (problem.toml), and each submission is graded on one variant drawn at
random and kept secret, so the hidden inputs change from one submission to
the next: a lookup table of hidden answers, or a search on pass/fail, never
converges. The contract, checked here:

- sample cases do not depend on ``seed`` (learners see their inputs);
- hidden cases have the same names, in the same order, with the same
  argument shapes and types, in every variant: only values change;
- every variant's hidden inputs differ from every other variant's;
- generation is deterministic for a given seed: derive every random
  generator from it (``np.random.default_rng([seed, 17])``).

Inputs follow one convention so every problem reads the same: scalar arguments
are Python floats (the learner's function casts them), arrays are float32
numpy arrays (the child hands them to the learner as float32 ``jax.Array``s),
and a pytree argument (parameters, gradients) is a dict with string keys (no "/") whose
values are float32 arrays or further such dicts, at most ``MAX_TREE_DEPTH`` deep.

Two more functions a ``cases.py`` may define:

- ``memory_probes()``: cases at growing batch sizes for a memory budget
  (grader/judging/requirements.py). They run with the samples, before any hidden input,
  are graded like every case, and the temporary bytes of the programs that
  answered them are what the budget compares; their inputs are the same for
  every submission (they measure memory, not correctness).
- ``regimes()``: for each regime problem.toml promises, a predicate on a case's
  arguments (a dict) that says whether the case exercises it. `jaxjudge check`
  fails when some variant has no hidden case in a promised regime.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from grader.child.protocol import MAX_TREE_DEPTH
from grader.errors import ProblemError

__all__ = ["Case", "CaseBank", "Regime", "RegimeAnswers", "load_cases", "load_regimes"]

CASE_NAME = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")

# A float, a float32 array, or a dict of str -> (array | dict) (a pytree of arrays).
Argument = float | np.ndarray[Any, np.dtype[np.float32]] | dict[str, Any]
# Whether a case's arguments (by name) exercise one regime (cases.py ``regimes()``).
Regime = Callable[[dict[str, Argument]], bool]


@dataclass(frozen=True)
class Case:
    """One named test case. ``sample`` cases are shown to learners with their
    inputs and expected outputs; hidden ones reveal neither. A ``probe`` (set by the
    loader for ``memory_probes()``) runs with the samples and measures memory."""

    name: str
    args: dict[str, Argument]
    sample: bool = False
    note: str = field(default="", compare=False)
    probe: bool = False
    part: str | None = None  # the part it exercises (problem.toml [[parts]]); None without parts

    @property
    def hidden(self) -> bool:
        return not (self.sample or self.probe)


def _check_argument(path: Path, case: Case, name: str, value: object, depth: int = 0) -> None:
    where = f"case {case.name!r}, argument {name!r}"
    if isinstance(value, dict):
        if depth >= MAX_TREE_DEPTH:
            raise ProblemError(path, where, f"trees nest at most {MAX_TREE_DEPTH} dicts deep")
        if not value:
            raise ProblemError(path, where, "an empty dict is not a tree of arrays")
        for key, item in value.items():
            if type(key) is not str or not key or "/" in key:
                raise ProblemError(
                    path, where, f"tree keys must be non-empty strings without '/', got {key!r}"
                )
            if not isinstance(item, np.ndarray | dict):
                raise ProblemError(
                    path,
                    where,
                    f"a tree's leaves are float32 arrays; {key!r} is {type(item).__name__}",
                )
            _check_argument(path, case, f"{name}/{key}", item, depth + 1)
        return
    if isinstance(value, np.ndarray):
        if value.dtype != np.float32:
            raise ProblemError(path, where, f"arrays must be float32, got {value.dtype}")
        return
    if type(value) is not float:
        raise ProblemError(
            path,
            where,
            f"must be a Python float, a float32 numpy array or a dict of them, got {type(value).__name__}",
        )


# What a case's arguments are checked against: the problem's one list of argument names,
# or (a problem with [[parts]]) each part's, by part name.
Arguments = list[str] | dict[str, list[str]]


def validate_cases(path: Path, cases: Iterable[object], arguments: Arguments) -> list[Case]:
    validated: list[Case] = []
    seen: set[str] = set()
    for case in cases:
        if not isinstance(case, Case):
            raise ProblemError(
                path, "cases()", f"yielded {type(case).__name__}, expected grader.cases.Case"
            )
        _validate_case(path, case, arguments)
        if case.name in seen:
            raise ProblemError(path, f"case {case.name!r}", "duplicate case name")
        seen.add(case.name)
        validated.append(case)
    if not any(case.sample for case in validated):
        raise ProblemError(path, "cases()", "at least one case must be a sample (sample=True)")
    if not any(not case.sample for case in validated):
        raise ProblemError(path, "cases()", "at least one case must be hidden (sample=False)")
    if isinstance(arguments, dict):
        for part in arguments:
            mine = [case for case in validated if case.part == part]
            if not any(case.sample for case in mine) or all(case.sample for case in mine):
                raise ProblemError(
                    path,
                    "cases()",
                    f"part {part!r} needs at least one sample case and one hidden case",
                )
    return validated


def same_value(a: Argument, b: Argument) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_value(a[key], b[key]) for key in a)
        )
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return bool(a == b)  # floats
    return a.shape == b.shape and bool(np.array_equal(a, b))


def argument_signature(value: Argument) -> object:
    """What a compilation depends on besides values: a float's kind, an array's shape,
    a tree's keys and its leaves' shapes."""
    if isinstance(value, dict):
        return tuple((key, argument_signature(item)) for key, item in sorted(value.items()))
    if isinstance(value, float):
        return "float"
    return tuple(value.shape)


def _same_kind(a: Argument, b: Argument) -> bool:
    return argument_signature(a) == argument_signature(b)


@dataclass(frozen=True)
class CaseBank:
    """A problem's cases: the samples, the hidden cases of every variant, and the
    memory probes (which run with the samples)."""

    samples: tuple[Case, ...]
    hidden: tuple[tuple[Case, ...], ...]  # hidden[variant]
    probes: tuple[Case, ...] = ()

    @property
    def first_phase(self) -> tuple[Case, ...]:
        """What runs before any hidden input reaches a child: samples, then probes."""
        return self.samples + self.probes

    @property
    def variants(self) -> int:
        return len(self.hidden)

    def for_variant(self, variant: int) -> tuple[Case, ...]:
        return self.hidden[variant]

    def keyed(self) -> list[tuple[str, Case]]:
        """Every distinct case with its key: samples and probes once, then each
        variant's hidden cases."""
        keyed = [(case.name, case) for case in self.first_phase]
        for variant, cases in enumerate(self.hidden):
            keyed += [(case_key(case, variant), case) for case in cases]
        return keyed


def case_key(case: Case, variant: int) -> str:
    """How trusted outputs are filed: a sample or probe by name, a hidden case by name
    and variant."""
    return f"{case.name}@{variant}" if case.hidden else case.name


def _bank(path: Path, generated: list[list[Case]]) -> CaseBank:
    first = generated[0]
    samples = tuple(case for case in first if case.sample)
    hidden_names = [case.name for case in first if not case.sample]
    hidden: list[tuple[Case, ...]] = []
    for seed, cases in enumerate(generated):
        these = tuple(case for case in cases if case.sample)
        for mine, theirs in zip(these, samples, strict=False):
            if (mine.name, mine.part) != (theirs.name, theirs.part) or not all(
                same_value(mine.args[name], theirs.args[name]) for name in mine.args
            ):
                raise ProblemError(
                    path,
                    f"case {mine.name!r}",
                    f"a sample differs between seeds 0 and {seed}; samples must not depend on the"
                    " seed (and every random generator must be seeded)",
                )
        if len(these) != len(samples):
            raise ProblemError(path, "cases()", f"seed {seed} gives a different set of samples")
        variant = tuple(case for case in cases if not case.sample)
        if [case.name for case in variant] != hidden_names or [c.part for c in variant] != [
            c.part for c in _hidden(first)
        ]:
            raise ProblemError(
                path,
                "cases()",
                f"seed {seed} gives hidden cases {[c.name for c in variant]}, seed 0 gives"
                f" {hidden_names}; every seed must give the same names (and parts) in the same order",
            )
        for case, model in zip(variant, _hidden(first), strict=True):
            for name in case.args:
                if not _same_kind(case.args[name], model.args[name]):
                    raise ProblemError(
                        path,
                        f"case {case.name!r}, argument {name!r}",
                        f"its shape differs between seeds 0 and {seed}; variants change values, not shapes",
                    )
        hidden.append(variant)
    _require_distinct_variants(path, hidden)
    return CaseBank(samples, tuple(hidden))


def _hidden(cases: list[Case]) -> list[Case]:
    return [case for case in cases if not case.sample]


def _require_distinct_variants(path: Path, hidden: list[tuple[Case, ...]]) -> None:
    for position, case in enumerate(hidden[0]):
        for seed_a in range(len(hidden)):
            for seed_b in range(seed_a + 1, len(hidden)):
                a, b = hidden[seed_a][position], hidden[seed_b][position]
                if all(same_value(a.args[name], b.args[name]) for name in a.args):
                    raise ProblemError(
                        path,
                        f"case {case.name!r}",
                        f"its inputs are the same for seeds {seed_a} and {seed_b};"
                        " derive hidden inputs from the seed so that every variant differs",
                    )


def _call_author_code(path: Path, name: str, call: Any) -> Any:
    """Import ``cases.py`` (trusted author code) and return ``call(module)``; any
    failure becomes a ProblemError naming the line."""
    if not path.is_file():
        raise ProblemError(
            path, None, "missing: every problem needs a cases.py defining cases(seed)"
        )
    module_name = f"_jaxjudge_cases_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ProblemError(path, None, "cannot be imported")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        return call(module)
    except ProblemError:
        raise
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
        line = f" (line {frames[-1].lineno})" if frames else ""
        raise ProblemError(
            path, f"{name}()", f"raised {type(error).__name__}: {error}{line}"
        ) from None
    finally:
        sys.modules.pop(module_name, None)


def load_cases(
    path: Path, arguments: Arguments, variants: int, *, with_probes: bool = False
) -> CaseBank:
    """Import ``cases.py`` (trusted author code) and validate every variant it generates,
    and its memory probes when ``with_probes``."""

    def generate_all(module: Any) -> list[list[Case]]:
        generate = getattr(module, "cases", None)
        if not callable(generate):
            raise ProblemError(path, "cases", "cases.py must define a function cases(seed)")
        _require_seed_parameter(path, generate)
        return [list(generate(seed)) for seed in range(variants)]

    generated = _call_author_code(path, "cases", generate_all)
    return assemble(
        path,
        generated,
        arguments,
        lambda: _call_author_code(path, "memory_probes", _probes_of(path)) if with_probes else None,
    )


def assemble(
    path: Path,
    generated: list[list[object]],
    arguments: Arguments,
    probes: Callable[[], list[object] | None],
) -> CaseBank:
    """The bank of what ``cases(seed)`` gave for every seed, validated, and of what
    ``probes()`` gives (``memory_probes()``'s cases; None without a memory budget): the
    same checks whether cases.py ran in this process or in a sandbox."""
    bank = _bank(path, [validate_cases(path, cases, arguments) for cases in generated])
    found = probes()
    if found is None:
        return bank
    probed = _validate_probes(path, found, arguments)
    taken = {case.name for case in bank.samples + bank.hidden[0]}
    for probe in probed:
        if probe.name in taken:
            raise ProblemError(path, f"probe {probe.name!r}", "a probe needs a name of its own")
        taken.add(probe.name)
    return CaseBank(bank.samples, bank.hidden, probed)


MIN_MEMORY_PROBES = 2


def _probes_of(path: Path) -> Callable[[Any], list[object]]:
    """``memory_probes()`` of cases.py: cases from the smallest batch to the largest (a
    memory budget compares the last with the first), the same for every submission."""

    def generate(module: Any) -> list[object]:
        probes = getattr(module, "memory_probes", None)
        if not callable(probes):
            raise ProblemError(
                path, "memory_probes", "a memory budget needs memory_probes() in cases.py"
            )
        return list(probes())

    return generate


def _validate_probes(path: Path, probes: list[object], arguments: Arguments) -> tuple[Case, ...]:
    if len(probes) < MIN_MEMORY_PROBES:
        raise ProblemError(path, "memory_probes()", f"give at least {MIN_MEMORY_PROBES} probes")
    validated = []
    for probe in probes:
        if not isinstance(probe, Case) or probe.sample:
            raise ProblemError(
                path, "memory_probes()", "each probe is a Case (not a sample) with real inputs"
            )
        _validate_case(path, probe, arguments)
        validated.append(replace(probe, probe=True))
    return tuple(validated)


def _validate_case(path: Path, case: Case, arguments: Arguments) -> None:
    """One case's name, part and arguments."""
    if not CASE_NAME.match(case.name):
        raise ProblemError(
            path, f"case {case.name!r}", "names are lowercase words joined by - or _"
        )
    arguments = _arguments_of(path, case, arguments)
    if list(case.args) != arguments:
        raise ProblemError(
            path,
            f"case {case.name!r}",
            f"arguments {list(case.args)} do not match problem.toml arguments {arguments} (same names, same order)",
        )
    for name, value in case.args.items():
        _check_argument(path, case, name, value)


def _arguments_of(path: Path, case: Case, arguments: Arguments) -> list[str]:
    """The argument names of the part ``case`` names (a problem with [[parts]]), or the
    problem's (a problem without, whose cases name no part)."""
    where = f"case {case.name!r}"
    if not isinstance(arguments, dict):
        if case.part is not None:
            raise ProblemError(
                path, where, "names a part, and problem.toml has no [[parts]]: leave part out"
            )
        return arguments
    if case.part is not None and type(case.part) is not str:
        raise ProblemError(path, where, "part must be a part's name (text)")
    if case.part is None:
        raise ProblemError(
            path, where, f"names no part: give Case(..., part=...), one of {sorted(arguments)}"
        )
    if case.part not in arguments:
        raise ProblemError(
            path,
            where,
            f"names part {case.part!r}, which problem.toml does not state; parts:"
            f" {sorted(arguments)}",
        )
    return arguments[case.part]


def load_regimes(path: Path) -> dict[str, Regime]:
    """``regimes()`` of cases.py: each promised regime's name and its predicate (none
    when cases.py has no ``regimes``)."""

    def generate(module: Any) -> dict[str, Regime]:
        regimes = getattr(module, "regimes", None)
        if regimes is None:
            return {}
        found = regimes() if callable(regimes) else None
        if not isinstance(found, dict) or not all(
            isinstance(name, str) and callable(test) for name, test in found.items()
        ):
            raise ProblemError(
                path, "regimes()", "regimes() returns a dict of name -> predicate(args)"
            )
        return found

    regimes: dict[str, Regime] = _call_author_code(path, "regimes", generate)
    return regimes


@dataclass(frozen=True)
class RegimeAnswers:
    """What cases.py's ``regimes()`` says of the hidden cases: for each regime it names,
    the names of each variant's hidden cases in it (``covering[name][variant]``), or the
    error its predicate raised (``errors[name]``, a whole sentence); ``invalid``: why
    ``regimes()`` itself is unusable. Computed in this process for a trusted problem,
    in the sandbox for an untrusted one (grader/author_code.py), read the same way."""

    covering: dict[str, tuple[tuple[str, ...], ...]]
    errors: dict[str, str] = field(default_factory=dict)
    invalid: str | None = None


def regime_answers(path: Path, bank: CaseBank) -> RegimeAnswers:
    """``regimes()`` of a trusted cases.py, asked of every variant's hidden cases here."""
    try:
        tests = load_regimes(path)
    except ProblemError as error:
        return RegimeAnswers({}, invalid=str(error))
    covering: dict[str, tuple[tuple[str, ...], ...]] = {}
    errors: dict[str, str] = {}
    for name, test in tests.items():
        try:
            covering[name] = tuple(
                tuple(case.name for case in cases if in_regime(path, name, test, case))
                for cases in bank.hidden
            )
        except ProblemError as error:
            errors[name] = str(error)
    return RegimeAnswers(covering, errors)


def in_regime(path: Path, name: str, test: Regime, case: Case) -> bool:
    """Whether ``case`` exercises the regime; an error is the folder's, naming both."""
    try:
        return bool(test(dict(case.args)))
    except Exception as error:
        raise ProblemError(
            path,
            f"regimes()[{name!r}]",
            f"raised {type(error).__name__} on case {case.name!r}: {error}",
        ) from None


def _require_seed_parameter(path: Path, generate: Any) -> None:
    try:
        inspect.signature(generate).bind(0)
    except (TypeError, ValueError):
        raise ProblemError(
            path,
            "cases",
            "cases() must take one argument, the variant's seed: def cases(seed): ..."
            " (see docs/authoring.md, 'Hidden inputs change between submissions')",
        ) from None
