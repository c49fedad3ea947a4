"""What a learner may see of a grading report.

A sample case keeps every detail: inputs, expected and actual values, the
error's size, the traceback, the time. A hidden case answers only its
verdict class and, for a wrong answer, the kind of mismatch
(grader.judging.compare.Failure), plus what the statement already fixes: for a wrong
shape, the shape of each expected array output. Nothing the learner's code
chose reaches the learner from a hidden case, because anything it chose could
be computed from the hidden inputs (docs/security.md, "Channels"):

- never the learner's own shape, not even its number of dimensions (an empty
  array may have any other dimensions);
- never a leaf path, not even one of the reference's tree (which leaf fails
  first is the learner's choice), nor which of several outputs failed;
- never an exception's class name or message (a class can be named after an
  input, and even a list of known names is a choice among dozens);
- never a magnitude, an index, a tolerance ratio, a value, a per-case time,
  or the output printed once the hidden inputs were in the child
  (grader/running/output.py splits it off); nor the whole grading's time.

Staff see the full report on their own pages.
"""

from __future__ import annotations

from grader.child.verdicts import Verdict
from grader.judging.compare import Failure
from grader.judging.report import AuthorTestReport, CaseReport, GradeReport

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
_LEAF_SHAPE = "a leaf of the returned tree does not have the expected shape"
_LIMITS = {
    Verdict.TIME_LIMIT_EXCEEDED: "the submission ran out of time during the hidden cases",
    Verdict.MEMORY_LIMIT_EXCEEDED: "the submission ran out of memory during the hidden cases",
    Verdict.OUTPUT_LIMIT_EXCEEDED: "the output is larger than allowed",
}
HIDDEN_NOTE = "hidden case: only its verdict is shown"


def _shape_message(case: CaseReport) -> str:
    shapes = case.expected_shapes or {}
    if not shapes:
        return _LEAF_SHAPE
    if len(shapes) == 1:
        return f"expected shape {next(iter(shapes.values()))}; your answer has a different shape"
    listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
    return f"expected shapes {listed}; your answer has a different shape"


def _hidden_message(case: CaseReport) -> str:
    if case.verdict is Verdict.WRONG_ANSWER:
        if case.failure == Failure.SHAPE:
            return _shape_message(case)
        try:
            return _FAILURES[Failure(case.failure or "")]
        except (ValueError, KeyError):
            return "the output does not match"
    if case.verdict is Verdict.RUNTIME_ERROR:
        return (
            f"your code raised an exception or stopped ({HIDDEN_NOTE}); if every sample"
            " passes, look for inputs the samples do not show (the statement lists them)"
        )
    return _LIMITS.get(case.verdict, "")


def hidden_case_view(case: CaseReport) -> CaseReport:
    view = CaseReport(name=case.name, hidden=True, verdict=case.verdict, part=case.part)
    view.message = _hidden_message(case)
    if case.verdict is Verdict.WRONG_ANSWER:
        view.failure = case.failure
        if case.failure == Failure.SHAPE:
            view.expected_shapes = case.expected_shapes
    return view


def tests_view(tests: list[AuthorTestReport]) -> list[AuthorTestReport]:
    """Author tests as a learner sees them: a visible test whole (its author's message and
    its assertion's first line when it failed); a hidden one as "hidden test N" and
    passed or failed, no name, no message (its inputs were the submission's secret draw)."""
    shown: list[AuthorTestReport] = []
    number = 0
    for test in tests:
        if not test.hidden:
            shown.append(test.model_copy())
            continue
        number += 1
        shown.append(
            AuthorTestReport(
                name=f"hidden test {number}", hidden=True, points=test.points, passed=test.passed
            )
        )
    return shown


def learner_view(report: GradeReport) -> GradeReport:
    """A copy of ``report`` with hidden cases reduced to what a learner may see."""
    had_hidden = any(case.hidden for case in report.cases) or any(t.hidden for t in report.tests)
    return report.model_copy(
        update={
            "cases": [
                hidden_case_view(case) if case.hidden else case.model_copy()
                for case in report.cases
            ],
            "variant": None,
            "hidden_output": "",
            "continued_from_run": False,
            "run_draw": False,
            # The whole grading's time includes the hidden cases': a timing channel.
            "seconds": None if had_hidden else report.seconds,
            "cpu_seconds": None if had_hidden else report.cpu_seconds,
            "hidden_output_withheld": had_hidden,
            "tests": tests_view(report.tests),
            "tests_error": "",
        }
    )
