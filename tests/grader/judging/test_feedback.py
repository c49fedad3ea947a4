"""What a learner sees of a report (grader/judging/feedback.py), on reports built by hand: fast."""

from __future__ import annotations

import json

import pytest

from grader.child.verdicts import Verdict
from grader.judging.compare import Failure
from grader.judging.feedback import learner_view
from grader.judging.report import CaseReport, GradeReport


def report_with(*cases: CaseReport) -> GradeReport:
    return GradeReport(
        problem="p",
        mode="submit",
        verdict=Verdict.WRONG_ANSWER,
        score=0.0,
        cases=list(cases),
        stdout="sample output\n",
        variant=5,
        hidden_output="INPUT 0.123456789\n",
    )


def detailed(name: str, *, hidden: bool, **fields: object) -> CaseReport:
    case = CaseReport(
        name=name,
        hidden=hidden,
        verdict=Verdict.WRONG_ANSWER,
        seconds=0.123,
        max_abs_error=1.2345678,
        max_rel_error=0.5,
        expected_shape="(2,)",
        actual_shape="(2,)",
        message="max abs error 1.235 (relative 0.5) at index (1,): 1.2e+06x the tolerance",
        failure=Failure.TOLERANCE.value,
        inputs={"x": "float32(2,) [0.1, 0.2]"},
        expected=[[1.0, 2.0]],
        actual=[[0.0, 0.0]],
    )
    for key, value in fields.items():
        setattr(case, key, value)
    return case


def test_a_sample_case_keeps_every_detail() -> None:
    sample = detailed("s", hidden=False)
    view = learner_view(report_with(sample))
    assert view.cases[0] == sample
    assert view.stdout == "sample output\n"


def test_a_wrong_hidden_case_says_only_its_kind_of_mismatch() -> None:
    view = learner_view(report_with(detailed("h", hidden=True)))
    case = view.cases[0]
    assert case.verdict is Verdict.WRONG_ANSWER
    assert case.message == "the output is outside the tolerance"
    assert (case.seconds, case.max_abs_error, case.max_rel_error) == (None, None, None)
    assert (case.inputs, case.expected, case.actual) == (None, None, None)
    assert "1.23" not in json.dumps(view.to_json())


def test_a_wrong_shape_says_the_expected_shape_and_nothing_of_the_learners() -> None:
    # An empty array may have any other dimensions: (0, a, b) would carry a and b.
    hidden = detailed(
        "h",
        hidden=True,
        failure="shape",
        expected_shape="(3, 4)",
        actual_shape="(0, 271828, 3141)",
        expected_shapes={"out": "(3, 4)"},
    )
    case = learner_view(report_with(hidden)).cases[0]
    assert case.message == "expected shape (3, 4); your answer has a different shape"
    assert (case.expected_shape, case.actual_shape) == (None, None)
    assert "271828" not in json.dumps(case.model_dump())


def test_with_several_outputs_every_expected_shape_is_listed_not_the_one_that_failed() -> None:
    shapes = {"lse": "(6,)", "probs": "(6, 17)"}
    first = detailed("h", hidden=True, failure="shape", expected_shapes=shapes)
    second = detailed(
        "h", hidden=True, failure="shape", expected_shapes=shapes, message="output probs: ..."
    )
    views = [learner_view(report_with(c)).cases[0] for c in (first, second)]
    assert views[0] == views[1]
    assert (
        views[0].message
        == "expected shapes lse (6,), probs (6, 17); your answer has a different shape"
    )


def test_a_tree_output_never_names_the_leaf_that_failed() -> None:
    # Which leaf fails first is the learner's choice: a number up to the leaf count.
    for leaf in ("params/dense_0/kernel", "params/dense_1/bias"):
        for failure in ("shape", "tolerance", "structure", "dtype"):
            hidden = detailed("h", hidden=True, failure=failure, leaf=leaf, expected_shapes=None)
            case = learner_view(report_with(hidden)).cases[0]
            assert case.leaf is None and "dense" not in case.message


@pytest.mark.parametrize("exception", ["ValueError", "XlaRuntimeError", "V0_314159", None])
def test_a_hidden_runtime_error_names_no_exception_class(exception: str | None) -> None:
    hidden = detailed(
        "h",
        hidden=True,
        verdict=Verdict.RUNTIME_ERROR,
        failure=None,
        exception=exception,
        message="Traceback ...\nValueError: INPUT 0.123456789",
    )
    case = learner_view(report_with(hidden)).cases[0]
    assert case.exception is None
    assert "0.123" not in case.message and "Traceback" not in case.message
    assert "Error" not in case.message


def test_limits_on_hidden_cases_are_the_verdict_alone() -> None:
    for verdict in (Verdict.TIME_LIMIT_EXCEEDED, Verdict.MEMORY_LIMIT_EXCEEDED, Verdict.SKIPPED):
        hidden = detailed(
            "h", hidden=True, verdict=verdict, message="killed by SIGKILL (status 137)"
        )
        case = learner_view(report_with(hidden)).cases[0]
        assert case.verdict is verdict
        assert "137" not in case.message and "SIGKILL" not in case.message


def test_staff_fields_are_dropped_and_withheld_output_is_announced() -> None:
    view = learner_view(report_with(detailed("h", hidden=True)))
    assert view.variant is None and view.hidden_output == ""
    assert view.hidden_output_withheld
    assert learner_view(report_with(detailed("s", hidden=False))).hidden_output_withheld is False


def test_the_whole_gradings_time_is_withheld_once_hidden_cases_ran() -> None:
    with_hidden = report_with(detailed("h", hidden=True))
    with_hidden.seconds = 12.345
    assert learner_view(with_hidden).seconds is None
    samples_only = report_with(detailed("s", hidden=False))
    samples_only.seconds = 1.5
    assert learner_view(samples_only).seconds == 1.5
