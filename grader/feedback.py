"""What a learner may see of a grading report.

A sample case keeps every detail: inputs, expected and actual values, the
error's size, the traceback, the time. A hidden case answers only its
verdict class, plus the structural facts the statement already fixes:

- wrong answer: the kind of mismatch (grader.compare.Failure), for a
  wrong shape the expected and actual shapes, and for a pytree output the
  path of the leaf that failed (the statement fixes the tree's structure);
  never a magnitude, an index,
  a tolerance ratio or a value (the error's size of a constant answer *is*
  the expected value);
- runtime error: the exception's class name if it is a standard one (a
  learner-defined class name could spell out an input), never its message or
  traceback;
- time, memory and output limits: the verdict alone; no per-case time.

Output printed once the hidden inputs were in the child's memory is never
shown (grader/output.py splits it off); the whole run's time is. Staff see
the full report on their own pages.
"""

from __future__ import annotations

import builtins

from grader.compare import Failure
from grader.report import CaseReport, GradeReport
from grader.verdicts import Verdict

# Exception classes a hidden case may name: Python's own and the usual
# JAX/Flax/NumPy ones. Anything else is reported as "Exception".
KNOWN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
) | {
    "XlaRuntimeError",
    "JaxRuntimeError",
    "ConcretizationTypeError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
    "KeyReuseError",
    "ScopeParamShapeError",
    "ScopeParamNotFoundError",
    "ScopeCollectionNotFound",
    "ApplyScopeInvalidVariablesTypeError",
    "TraceContextError",
    "FlaxError",
    "LinAlgError",
    "AxisError",
}

_FAILURES = {
    Failure.INVALID: "the function did not return an array of numbers",
    Failure.DTYPE: (
        "the output has the wrong dtype: not real numbers (boolean, complex, ...),"
        " or integers where floating-point values are expected (or the reverse)"
    ),
    Failure.NOT_FINITE: "the output holds NaN or an infinity where a finite value was expected, or the reverse",
    Failure.TOLERANCE: "the output is outside the tolerance",
    Failure.STRUCTURE: "the returned tree does not have the expected leaves",
}
_LIMITS = {
    Verdict.TIME_LIMIT_EXCEEDED: "the submission ran out of time during the hidden cases",
    Verdict.MEMORY_LIMIT_EXCEEDED: "the submission ran out of memory during the hidden cases",
    Verdict.OUTPUT_LIMIT_EXCEEDED: "the output is larger than allowed",
}
HIDDEN_NOTE = "hidden case: only its verdict is shown"


def exception_name(name: str | None) -> str:
    return name if name in KNOWN_EXCEPTIONS else "Exception"


def _hidden_message(case: CaseReport) -> str:
    if case.verdict is Verdict.WRONG_ANSWER:
        where = f"leaf {case.leaf}: " if case.leaf else ""
        if case.failure == Failure.SHAPE:
            return f"{where}expected shape {case.expected_shape}, got {case.actual_shape}"
        try:
            return where + _FAILURES[Failure(case.failure or "")]
        except (ValueError, KeyError):
            return where + "the output does not match"
    if case.verdict is Verdict.RUNTIME_ERROR:
        if case.exception:
            return f"{exception_name(case.exception)} raised ({HIDDEN_NOTE})"
        return f"the process stopped before reporting this case ({HIDDEN_NOTE})"
    return _LIMITS.get(case.verdict, "")


def hidden_case_view(case: CaseReport) -> CaseReport:
    view = CaseReport(name=case.name, hidden=True, verdict=case.verdict)
    view.message = _hidden_message(case)
    if case.verdict is Verdict.WRONG_ANSWER:
        view.failure, view.leaf = case.failure, case.leaf
        if case.failure == Failure.SHAPE:
            view.expected_shape, view.actual_shape = case.expected_shape, case.actual_shape
    if case.verdict is Verdict.RUNTIME_ERROR and case.exception:
        view.exception = exception_name(case.exception)
    return view


def learner_view(report: GradeReport) -> GradeReport:
    """A copy of ``report`` with hidden cases reduced to what a learner may see."""
    had_hidden = any(case.hidden for case in report.cases)
    return report.model_copy(
        update={
            "cases": [
                hidden_case_view(case) if case.hidden else case.model_copy()
                for case in report.cases
            ],
            "variant": None,
            "hidden_output": "",
            "hidden_output_withheld": had_hidden,
        }
    )
