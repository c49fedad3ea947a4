"""The grading report: everything a grading found.

A report holds full details, hidden cases included, for staff (a learner's
timeline, the author preview, `jaxjudge grade --details`). What a learner
may see of it is ``grader.feedback.learner_view``. ``to_json`` always gives
strict JSON: a non-finite number becomes null.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from grader.compare import format_shape
from grader.verdicts import Verdict, headline

SHOW_VALUES_UP_TO = 64  # elements; larger sample arrays are summarised


@dataclass
class CaseReport:
    name: str
    hidden: bool
    verdict: Verdict
    seconds: float | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    expected_shape: str | None = None
    actual_shape: str | None = None
    message: str = ""
    # A wrong answer's kind of mismatch (grader.compare.Failure), a runtime
    # error's exception class: what a hidden case may tell the learner.
    failure: str | None = None
    exception: str | None = None
    # Sample cases only: what went in, what was expected, what came out.
    inputs: dict[str, str] | None = None
    expected: list[Any] | None = None
    actual: list[Any] | None = None


@dataclass
class GradeReport:
    problem: str
    mode: str
    verdict: Verdict
    score: float
    cases: list[CaseReport] = field(default_factory=list)
    diagnosis: str | None = None
    message: str = ""
    stdout: str = ""  # printed before any hidden input reached the child
    versions: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    # Staff only (grader.feedback removes them): which draw of the hidden
    # inputs was graded, and what was printed while hidden cases ran.
    variant: int | None = None
    hidden_output: str = ""
    # Set in a learner's view: output was printed during hidden cases and is not shown.
    hidden_output_withheld: bool = False

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradeReport:
        cases = [
            CaseReport(**{**case, "verdict": Verdict(case["verdict"])})
            for case in data.get("cases", [])
        ]
        fields = {
            name: data[name]
            for name in cls.__dataclass_fields__
            if name in data and name not in ("cases", "verdict")
        }
        return cls(**{**fields, "verdict": Verdict(data["verdict"]), "cases": cases})

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        for case in data["cases"]:
            case["verdict"] = case["verdict"].value
            case["hidden"] = bool(case["hidden"])
            for key in ("seconds", "max_abs_error", "max_rel_error"):
                case[key] = finite_or_none(case[key])
        data["score"] = finite_or_none(data["score"]) or 0.0
        data["seconds"] = finite_or_none(data["seconds"]) or 0.0
        return data


def finite_or_none(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def describe_value(value: float | np.ndarray[Any, Any]) -> str:
    if isinstance(value, float):
        return repr(value)
    if value.size <= SHOW_VALUES_UP_TO:
        body = np.array2string(value, precision=5, separator=", ", suppress_small=False)
        return f"{value.dtype.name}{format_shape(value.shape)} {body}"
    return f"{value.dtype.name} array of shape {format_shape(value.shape)}"


def _json_safe(value: Any) -> Any:
    if isinstance(value, list):
        return [_json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "nan", "inf", "-inf": strict JSON has no such numbers
    return value


def shown_values(array: np.ndarray[Any, Any]) -> Any:
    """Values as JSON-safe lists, or a description for large or non-real arrays."""
    if array.size > SHOW_VALUES_UP_TO:
        return f"{array.dtype.name} array of shape {format_shape(array.shape)}"
    if array.dtype.kind not in "iuf":
        return f"{array.dtype.name}{format_shape(array.shape)} {np.array2string(array, precision=5, separator=', ')}"
    return _json_safe(array.tolist())


def _one_or_all(outputs: list[Any] | None) -> Any:
    return outputs[0] if outputs and len(outputs) == 1 else outputs


def render_text(report: GradeReport) -> str:
    lines = [
        f"{report.problem}: {headline(report.verdict)} (score {report.score:.0%}, {report.seconds:.2f} s)"
    ]
    if report.message:
        lines += ["", report.message.rstrip()]
    if report.diagnosis:
        lines += ["", f"Likely mistake: {report.diagnosis}"]
    if report.cases:
        lines.append("")
    for case in report.cases:
        kind = "hidden" if case.hidden else "sample"
        timing = f" {case.seconds:.3f}s" if case.seconds is not None else ""
        lines.append(f"  [{headline(case.verdict):>22}] {case.name} ({kind}){timing}")
        if case.message:
            lines += [f"      {line}" for line in case.message.rstrip().splitlines()]
        if case.verdict is Verdict.WRONG_ANSWER and not case.hidden and case.expected is not None:
            lines.append(f"      expected: {_one_or_all(case.expected)}")
            lines.append(f"      got:      {_one_or_all(case.actual)}")
    if report.stdout:
        lines += ["", "Captured output:", report.stdout.rstrip()]
    if report.hidden_output_withheld:
        lines += ["", "(Output printed while hidden cases ran is not shown.)"]
    if report.hidden_output:
        lines += ["", "Output during hidden cases (staff only):", report.hidden_output.rstrip()]
    if report.variant is not None:
        lines += ["", f"Hidden inputs: variant {report.variant}"]
    versions = ", ".join(f"{name} {value}" for name, value in report.versions.items())
    lines += ["", f"Runtime: {versions}"]
    return "\n".join(lines)
