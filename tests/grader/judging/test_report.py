"""The grading report: stored and read back unchanged, strict JSON, readable text."""

from __future__ import annotations

import json
import math

import numpy as np

from grader.child.verdicts import Mode, Verdict
from grader.judging.report import CaseReport, GradeReport, describe_value, render_text, shown_values


def a_report(**changes: object) -> GradeReport:
    report = GradeReport(
        problem="scan-microbatched-grads",
        mode=Mode.SUBMIT,
        verdict=Verdict.WRONG_ANSWER,
        score=0.5,
        cases=[
            CaseReport(
                name="tiny",
                hidden=False,
                verdict=Verdict.WRONG_ANSWER,
                seconds=0.012,
                max_abs_error=0.5,
                max_rel_error=0.5,
                expected_shape="()",
                actual_shape="()",
                message="values differ",
                failure="values",
                inputs={"w": "float32() 1.0"},
                expected=[1.0],
                actual=[0.5],
            ),
            CaseReport(name="many-chunks@3", hidden=True, verdict=Verdict.ACCEPTED, seconds=0.02),
        ],
        diagnosis="You averaged the chunks.",
        stdout="hello\n",
        versions={"jax": "0.0-test", "backend": "cpu"},
        seconds=1.25,
        variant=3,
        hidden_output="printed during hidden cases\n",
    )
    return report.model_copy(update=changes)


def test_a_stored_report_reads_back_equal() -> None:
    report = a_report()
    stored = json.dumps(report.to_json(), allow_nan=False)
    assert GradeReport.from_stored(stored) == report
    assert GradeReport.from_json(json.loads(stored)) == report


def test_labels_are_in_the_json_for_every_reader() -> None:
    data = a_report().to_json()
    assert data["verdict_label"] == "Wrong answer"
    assert [case["verdict_label"] for case in data["cases"]] == ["Wrong answer", "Accepted"]


def test_non_finite_numbers_become_null_and_the_json_stays_strict() -> None:
    report = a_report(score=math.nan, seconds=math.inf)
    report.cases[0].seconds = math.inf  # as a frame might claim, after validation
    data = report.to_json()
    json.dumps(data, allow_nan=False)  # raises on NaN or infinity
    assert data["score"] == 0.0 and data["seconds"] is None
    assert data["cases"][0]["seconds"] is None
    assert (
        CaseReport(name="x", hidden=True, verdict=Verdict.ACCEPTED, seconds=math.nan).seconds
        is None
    )


def test_nothing_or_something_unreadable_stored_reads_as_none() -> None:
    assert GradeReport.from_stored(None) is None
    assert GradeReport.from_stored("") is None
    assert GradeReport.from_stored('{"verdict": "no such verdict"}') is None


def test_old_reports_with_unknown_fields_still_read() -> None:
    data = a_report().to_json() | {"a_field_from_an_older_version": 1}
    assert GradeReport.from_json(data).verdict is Verdict.WRONG_ANSWER


def test_the_text_says_the_verdict_each_case_and_what_a_sample_expected() -> None:
    text = render_text(a_report())
    assert text.splitlines()[0] == "scan-microbatched-grads: Wrong answer (score 50%, 1.25 s)"
    assert "Likely mistake: You averaged the chunks." in text
    assert "[          Wrong answer] tiny (sample) 0.012s" in text
    assert "      expected: 1.0\n      got:      0.5" in text
    assert "[              Accepted] many-chunks@3 (hidden) 0.020s" in text
    assert "Captured output:\nhello" in text
    assert "Output during hidden cases (staff only):" in text
    assert "Hidden inputs: variant 3" in text
    assert text.endswith("Runtime: jax 0.0-test, backend cpu")


def test_a_hidden_wrong_answer_never_shows_values_in_the_text() -> None:
    hidden = CaseReport(
        name="h", hidden=True, verdict=Verdict.WRONG_ANSWER, expected=[1.0], actual=[2.0]
    )
    text = render_text(a_report(cases=[hidden]))
    assert "expected:" not in text and "got:" not in text


def test_values_are_shown_small_and_summarised_large() -> None:
    assert describe_value(np.array([1.0, 2.0], dtype=np.float32)) == "float32(2,) [1., 2.]"
    assert describe_value(np.zeros(100)) == "float64 array of shape (100,)"
    assert shown_values(np.array([1.0, math.nan, math.inf])) == [1.0, "nan", "inf"]
    assert shown_values(np.zeros(100, dtype=np.int32)) == "int32 array of shape (100,)"


def test_a_sample_carries_each_outputs_name_and_tolerance_and_a_hidden_case_none() -> None:
    """What the page needs to show a difference beside its tolerance (static/failure-details.js):
    on the device that graded, a GPU tolerance where the problem has one."""
    from grader.cases import Case
    from grader.config import PROJECT_ROOT
    from grader.judging.feedback import learner_view
    from grader.judging.job import CaseOutcome
    from grader.judging.judge import CaseJudge
    from grader.judging.trees import Output
    from grader.judging.trusted import TrustedOutputs
    from grader.problems.problem import load_problem

    problem = load_problem(PROJECT_ROOT / "problems" / "stable-logsumexp")
    cases = (Case("tiny", {}, sample=True), Case("wide", {}))
    lse, probs = np.array([1.0], np.float32), np.array([[0.5, 0.5]], np.float32)
    trusted = TrustedOutputs(reference={k: [lse, probs] for k in ("tiny", "wide@0")}, mistakes={})
    judge = CaseJudge(problem, cases, ["tiny", "wide@0"], trusted)
    wrong: list[Output] = [np.array([1.5], np.float32), probs]
    sample, hidden = (
        judge(i, CaseOutcome(0.01, outputs=wrong)).judged.report  # type: ignore[union-attr]
        for i in range(2)
    )
    assert sample.compared is not None
    assert [(c.name, c.rtol, c.atol) for c in sample.compared] == [
        ("lse", 1e-5, 1e-5),
        ("probs", 1e-3, 1e-4),  # its own tolerance, problem.toml's [[outputs]]
    ]
    report = GradeReport(
        problem="p",
        mode=Mode.SUBMIT,
        verdict=Verdict.WRONG_ANSWER,
        score=0.0,
        cases=[sample, hidden],
    )
    seen = learner_view(report).cases
    assert seen[0].compared == sample.compared and seen[1].compared is None


def test_expected_values_are_rounded_as_the_inputs_beside_them() -> None:
    from grader.judging.report import rounded_values

    assert rounded_values([1.6380119323730469, 2.0, "nan"]) == "[1.63801, 2.     ,     nan]"
    assert rounded_values({"w": [0.1234567], "b": 2.5}) == "w: [0.12346]\nb: 2.5"
    assert rounded_values("float32 array of shape (1000,)") == "float32 array of shape (1000,)"
