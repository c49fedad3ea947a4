"""Test cases: the author's API (``Case``) and the loader for ``cases.py``.

A problem's ``cases.py`` defines ``cases()`` returning ``Case`` objects. Inputs
follow one convention so every problem reads the same: scalar arguments are
Python floats (the learner's function casts them), arrays are float32 numpy
arrays (the child hands them to the learner as float32 ``jax.Array``s).
Generation must be deterministic: seed every random generator.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grader.errors import ProblemError

CASE_NAME = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")

Argument = float | np.ndarray[Any, np.dtype[np.float32]]


@dataclass(frozen=True)
class Case:
    """One named test case. ``sample`` cases are shown to learners with their
    inputs and expected outputs; hidden ones reveal neither."""

    name: str
    args: dict[str, Argument]
    sample: bool = False
    note: str = field(default="", compare=False)


def _check_argument(path: Path, case: Case, name: str, value: object) -> None:
    where = f"case {case.name!r}, argument {name!r}"
    if isinstance(value, np.ndarray):
        if value.dtype != np.float32:
            raise ProblemError(path, where, f"arrays must be float32, got {value.dtype}")
        return
    if type(value) is not float:
        raise ProblemError(
            path,
            where,
            f"must be a Python float or a float32 numpy array, got {type(value).__name__}",
        )


def validate_cases(path: Path, cases: Iterable[object], arguments: list[str]) -> list[Case]:
    validated: list[Case] = []
    seen: set[str] = set()
    for case in cases:
        if not isinstance(case, Case):
            raise ProblemError(
                path, "cases()", f"yielded {type(case).__name__}, expected grader.cases.Case"
            )
        if not CASE_NAME.match(case.name):
            raise ProblemError(
                path, f"case {case.name!r}", "names are lowercase words joined by - or _"
            )
        if case.name in seen:
            raise ProblemError(path, f"case {case.name!r}", "duplicate case name")
        seen.add(case.name)
        if list(case.args) != arguments:
            raise ProblemError(
                path,
                f"case {case.name!r}",
                f"arguments {list(case.args)} do not match problem.toml arguments {arguments} (same names, same order)",
            )
        for name, value in case.args.items():
            _check_argument(path, case, name, value)
        validated.append(case)
    if not any(case.sample for case in validated):
        raise ProblemError(path, "cases()", "at least one case must be a sample (sample=True)")
    if not any(not case.sample for case in validated):
        raise ProblemError(path, "cases()", "at least one case must be hidden (sample=False)")
    return validated


def load_cases(path: Path, arguments: list[str]) -> list[Case]:
    """Import ``cases.py`` (trusted author code) and validate what it generates."""
    if not path.is_file():
        raise ProblemError(path, None, "missing: every problem needs a cases.py defining cases()")
    module_name = f"_jaxjudge_cases_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ProblemError(path, None, "cannot be imported")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        generate = getattr(module, "cases", None)
        if not callable(generate):
            raise ProblemError(path, "cases", "cases.py must define a function cases()")
        generated = list(generate())
    except ProblemError:
        raise
    except Exception as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
        line = f" (line {frames[-1].lineno})" if frames else ""
        raise ProblemError(
            path, "cases()", f"raised {type(error).__name__}: {error}{line}"
        ) from None
    finally:
        sys.modules.pop(module_name, None)
    return validate_cases(path, generated, arguments)
