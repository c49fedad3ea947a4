"""The grading report: everything a grading found.

A report holds full details, hidden cases included, for staff (a learner's
timeline, the author preview, `jaxjudge grade --details`). What a learner
may see of it is ``grader.judging.feedback.learner_view``. ``to_json`` always gives
strict JSON: a non-finite number becomes null.
"""

from __future__ import annotations

import logging
import math
from typing import Annotated, Any

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, computed_field

from grader.child.verdicts import Mode, Verdict, headline
from grader.judging.compare import format_shape
from grader.judging.trees import OutputTree

log = logging.getLogger("jaxjudge.report")
SHOW_VALUES_UP_TO = 64  # elements; larger sample arrays are summarised


def _finite(value: float | None) -> float | None:
    """Strict JSON has no NaN or infinity: a number that is not finite is stored as null."""
    return value if value is None or math.isfinite(value) else None


Measure = Annotated[float | None, AfterValidator(_finite)]


class ComparedOutput(BaseModel):
    """One output of a sample as the comparison held it: its name and its tolerance on the
    device that graded it (what a page needs to show the difference beside the tolerance)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    rtol: float
    atol: float


class CaseReport(BaseModel):
    """One case of a grading, with every detail (grader/judging/feedback.py says what a learner
    sees of a hidden one)."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(description="The case's name in cases.py.")
    hidden: bool = Field(description="Hidden cases reveal only their verdict to learners.")
    probe: bool = Field(
        False, description="A memory probe: graded like a sample, run for its memory."
    )
    part: str | None = Field(
        None, description="The part it exercises (problem.toml [[parts]]); None without parts."
    )
    verdict: Verdict
    seconds: Measure = Field(None, description="Time spent in the learner's function.")
    max_abs_error: Measure = Field(None, description="Largest |actual - expected|.")
    max_rel_error: Measure = Field(None, description="Largest |actual - expected| / |expected|.")
    expected_shape: str | None = None
    actual_shape: str | None = None
    expected_shapes: dict[str, str] | None = Field(
        None,
        description=(
            "Each array output's expected shape, by output name: what the statement fixes,"
            " all a hidden case's wrong shape may say."
        ),
    )
    message: str = Field("", description="Why it failed, for people.")
    failure: str | None = Field(
        None, description="A wrong answer's kind of mismatch (grader.judging.compare.Failure)."
    )
    exception: str | None = Field(None, description="A runtime error's exception class.")
    leaf: str | None = Field(
        None, description="A pytree output's failing leaf, by path (params/dense_0/kernel)."
    )
    inputs: dict[str, str] | None = Field(None, description="Samples only: what went in.")
    expected: list[Any] | None = Field(None, description="Samples only: what was expected.")
    actual: list[Any] | None = Field(None, description="Samples only: what came out.")
    compared: list[ComparedOutput] | None = Field(
        None, description="Samples only: each output's name and the tolerance it is held to."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict_label(self) -> str:
        """The verdict as people read it ("Wrong answer")."""
        return headline(self.verdict)


class AuthorTestReport(BaseModel):
    """One author test of a grading (tests.py): staff read everything; a learner reads a
    hidden one as "hidden test N: passed/failed" only (grader/judging/feedback.py)."""

    __test__ = False  # not a pytest class

    model_config = ConfigDict(extra="ignore")

    name: str = Field(description="The test function's name in tests.py.")
    hidden: bool = Field(description="Run on a submit only; learners read passed/failed only.")
    points: float = Field(description="What it adds to the score when it passes.")
    passed: bool
    message: str = Field(
        "",
        description=(
            "When it failed: the author's message, then the first line of what the test"
            " raised (an assertion's text)."
        ),
    )


class PartReport(BaseModel):
    """One part of a grading (a problem's graded function, grader/judging/credit.py): its
    verdict (the first failing case's), its cases passed, and its score, 0 to 1."""

    model_config = ConfigDict(extra="ignore")

    name: str = Field(description="The part's name (a problem without [[parts]]: its entry point).")
    entry_point: str = Field(description="The function the part calls.")
    weight: float = Field(description="The part's points in the score.")
    verdict: Verdict
    passed: int = Field(description="Its cases accepted.")
    total: int = Field(description="Its cases.")
    score: float = Field(description="Its fraction of cases accepted, 0 to 1.")
    message: str = Field("", description="Why the part could not run (its missing function).")
    diagnosis: str | None = Field(None, description="The known mistake this part matches.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict_label(self) -> str:
        return headline(self.verdict)


class GradeReport(BaseModel):
    """A whole grading: the verdict, each case, the diagnosis, the output, the runtime."""

    model_config = ConfigDict(extra="ignore")

    problem: str
    mode: Mode
    verdict: Verdict
    score: float = Field(
        description="0 to 1, by the problem's credit policy (grader/judging/credit.py)."
    )
    credit: str = Field("per-case", description="The problem's credit policy (problem.toml).")
    parts: list[PartReport] = Field(
        default_factory=list, description="Each part's result, in problem.toml's order."
    )
    cases: list[CaseReport] = Field(default_factory=list)
    diagnosis: str | None = Field(None, description="The known mistake the output matches.")
    message: str = ""
    stdout: str = Field("", description="Printed before any hidden input reached the child.")
    versions: dict[str, str] = Field(default_factory=dict, description="Runtime and backend.")
    seconds: Measure = Field(
        0.0, description="The whole grading's wall time (not in a learner's view of hidden cases)."
    )
    cpu_limit_seconds: Measure = Field(
        None, description="The CPU time the submission could use (grader/calibration.py)."
    )
    # Staff only (grader.judging.feedback removes them): which draw of the hidden
    # inputs was graded, what was printed while hidden cases ran, and the CPU time
    # the whole run used.
    cpu_seconds: Measure = None
    variant: int | None = None
    hidden_output: str = ""
    # Staff only (grader/parking.py): graded in the child of a passing run of the same
    # code; on the draw that run chose (in its child, or afresh where its outcome could
    # not be used). What the submission records goes beside the report
    # (grader.grade.GradingOutcome.draw_to_record); these say how it was graded.
    continued_from_run: bool = False
    run_draw: bool = False
    tests: list[AuthorTestReport] = Field(
        default_factory=list, description="The problem's author tests run by this grading."
    )
    # Staff only: why the problem's tests.py could not judge (its sandbox's error).
    tests_error: str = ""
    hidden_output_withheld: bool = Field(
        False, description="A learner's view: output during hidden cases is not shown."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict_label(self) -> str:
        """The verdict as people read it ("Time limit exceeded")."""
        return headline(self.verdict)

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GradeReport:
        return cls.model_validate(data)

    @classmethod
    def from_stored(cls, text: str | None) -> GradeReport | None:
        """A report as stored in the database (``result_json``); None when there is none,
        or when it cannot be read (a page shows the verdict column then, not a 500)."""
        if not text:
            return None
        try:
            return cls.model_validate_json(text)
        except ValidationError:
            log.warning("a stored report does not match the report's schema; ignored")
            return None

    def to_json(self) -> dict[str, Any]:
        """Strict-JSON-ready data: every number finite or null."""
        data = self.model_dump(mode="json")
        data["score"] = _finite(self.score) or 0.0
        data["seconds"] = _finite(self.seconds)
        for case, model in zip(data["cases"], self.cases, strict=True):
            for key in ("seconds", "max_abs_error", "max_rel_error"):
                case[key] = _finite(getattr(model, key))
        return data


def describe_value(value: float | np.ndarray[Any, Any] | dict[str, Any]) -> str:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{key!r}: {describe_value(item)}" for key, item in value.items()) + "}"
        )
    if value.size <= SHOW_VALUES_UP_TO:
        return f"{value.dtype.name}{format_shape(value.shape)} {_rounded(value)}"
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
        return f"{array.dtype.name}{format_shape(array.shape)} {_rounded(array)}"
    return _json_safe(array.tolist())


def _one_or_all(outputs: list[Any] | None) -> Any:
    return outputs[0] if outputs and len(outputs) == 1 else outputs


def render_parts(report: GradeReport) -> list[str]:
    """A problem with several parts: one line each (nothing for one function)."""
    if len(report.parts) < 2:
        return []
    lines = ["", f"Parts (credit {report.credit}):"]
    for part in report.parts:
        lines.append(
            f"  [{headline(part.verdict):>22}] {part.name} (`{part.entry_point}`, weight"
            f" {part.weight:g}): {part.passed}/{part.total} cases"
        )
    return lines


def render_text(report: GradeReport) -> str:
    timing = f", {report.seconds:.2f} s" if report.seconds is not None else ""
    lines = [f"{report.problem}: {headline(report.verdict)} (score {report.score:.0%}{timing})"]
    if report.message:
        lines += ["", report.message.rstrip()]
    if report.diagnosis:
        lines += ["", f"Likely mistake: {report.diagnosis}"]
    lines += render_parts(report)
    if report.cases:
        lines.append("")
    for case in report.cases:
        kind = "hidden" if case.hidden else "sample"
        timing = f" {case.seconds:.3f}s" if case.seconds is not None else ""
        of = f", part {case.part}" if case.part else ""
        lines.append(f"  [{headline(case.verdict):>22}] {case.name} ({kind}{of}){timing}")
        if case.message:
            lines += [f"      {line}" for line in case.message.rstrip().splitlines()]
        if case.verdict is Verdict.WRONG_ANSWER and not case.hidden and case.expected is not None:
            lines.append(f"      expected: {_one_or_all(case.expected)}")
            lines.append(f"      got:      {_one_or_all(case.actual)}")
    if report.tests:
        lines.append("")
    for number, test in enumerate(report.tests, 1):
        kind = "hidden" if test.hidden else "visible"
        outcome = "passed" if test.passed else "failed"
        lines.append(f"  test {number} {test.name} ({kind}, {test.points:g} points): {outcome}")
        if test.message:
            lines += [f"      {line}" for line in test.message.rstrip().splitlines()]
    if report.tests_error:
        lines += ["", f"The problem's tests could not run (staff only): {report.tests_error}"]
    if report.stdout:
        lines += ["", "Captured output:", report.stdout.rstrip()]
    if report.hidden_output_withheld:
        lines += ["", "(Output printed while hidden cases ran is not shown.)"]
    if report.hidden_output:
        lines += ["", "Output during hidden cases (staff only):", report.hidden_output.rstrip()]
    if report.variant is not None:
        lines += ["", f"Hidden inputs: variant {report.variant}"]
    if report.cpu_limit_seconds is not None:
        used = f"; used {report.cpu_seconds:.2f} s" if report.cpu_seconds is not None else ""
        lines += ["", f"CPU time limit: {report.cpu_limit_seconds:g} s{used}"]
    versions = ", ".join(f"{name} {value}" for name, value in report.versions.items())
    lines += ["", f"Runtime: {versions}"]
    return "\n".join(lines)


def rounded_values(shown: Any) -> str:
    """A ``shown_output`` as people read it: arrays rounded as the inputs beside them are
    (``_rounded``, as ``describe_value``), a tree leaf by leaf, a description as it is."""
    if isinstance(shown, dict):
        return "\n".join(f"{path}: {rounded_values(leaf)}" for path, leaf in shown.items())
    if isinstance(shown, str):
        return shown
    try:
        values = np.asarray(shown, dtype=np.float64)  # "nan" and "inf" strings read back
    except (TypeError, ValueError):
        return str(shown)
    return _rounded(values)


def _rounded(values: np.ndarray[Any, Any]) -> str:
    """An array as a sample shows it: five decimals, comma-separated."""
    return np.array2string(values, precision=5, separator=", ", suppress_small=False)


def shown_output(output: np.ndarray[Any, Any] | OutputTree | str) -> Any:
    """One output for a sample case's report: values, a tree's values by leaf path,
    or the text that says why it is not an array."""
    if isinstance(output, str):
        return output
    if isinstance(output, OutputTree):
        return {
            path or "(root)": leaf if isinstance(leaf, str) else shown_values(leaf)
            for path, leaf in zip(output.paths, output.leaves, strict=True)
        }
    return shown_values(output)
