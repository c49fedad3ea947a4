"""Known-mistake matching on made-up outputs, judged case by case as frames would be
(grader/judging/judge.py) and combined (grader/judging/diagnose.py): no child, milliseconds."""

from __future__ import annotations

import numpy as np
import pytest

from grader.cases import Case
from grader.config import PROJECT_ROOT
from grader.judging.diagnose import diagnose
from grader.judging.job import CaseOutcome, SolutionOutcome
from grader.judging.judge import CaseJudge
from grader.judging.trusted import Outputs, TrustedOutputs
from grader.problems.problem import Problem, load_problem

KEYS = ["tiny", "four-chunks", "many-chunks@0"]
CASES = (
    Case("tiny", {}, sample=True),
    Case("four-chunks", {}, sample=True),
    Case("many-chunks", {}),
)


@pytest.fixture(scope="module")
def problem() -> Problem:
    return load_problem(PROJECT_ROOT / "problems" / "scan-microbatched-grads")


def scalar(value: float) -> Outputs:
    return [np.array(value, dtype=np.float32)]


def trusted_with(mistakes: dict[str, list[float]]) -> TrustedOutputs:
    return TrustedOutputs(
        reference={key: scalar(1.0) for key in KEYS},
        mistakes={
            name: {key: scalar(value) for key, value in zip(KEYS, values, strict=True)}
            for name, values in mistakes.items()
        },
    )


def graded(problem: Problem, trusted: TrustedOutputs, *outputs: float | str) -> SolutionOutcome:
    """The cases as the reader would keep them: each judged the moment it arrived."""
    judge = CaseJudge(problem, CASES, KEYS, trusted)
    return SolutionOutcome(
        cases={
            i: judge(i, CaseOutcome(0.01, outputs=[v if isinstance(v, str) else scalar(v)[0]]))
            for i, v in enumerate(outputs)
        }
    )


def diagnosis_of(problem: Problem, name: str) -> str:
    return next(m.diagnosis for m in problem.mistakes if m.name == name)


def test_a_wrong_answer_matching_a_mistake_on_every_failing_case_gets_its_diagnosis(
    problem: Problem,
) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    found = diagnose(problem, graded(problem, trusted, 0.5, 0.5, 0.5))
    assert found == diagnosis_of(problem, "missing_factor_two")


def test_within_the_problems_tolerance_still_matches(problem: Problem) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    solution = graded(problem, trusted, 0.5004, 0.5, 0.4996)  # atol 1e-3
    assert diagnose(problem, solution) == diagnosis_of(problem, "missing_factor_two")


def test_one_failing_case_that_differs_from_the_mistake_means_no_diagnosis(
    problem: Problem,
) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    assert diagnose(problem, graded(problem, trusted, 0.5, 0.5, 0.7)) is None


def test_passing_cases_are_ignored(problem: Problem) -> None:
    # The mistake agrees with the reference on "tiny"; the learner passed it.
    trusted = trusted_with({"missing_factor_two": [0.9, 0.5, 0.5]})
    found = diagnose(problem, graded(problem, trusted, 1.0, 0.5, 0.5))
    assert found == diagnosis_of(problem, "missing_factor_two")


def test_mistakes_are_tried_in_name_order_and_the_first_match_wins(problem: Problem) -> None:
    trusted = trusted_with({"mean_loss": [0.5, 0.5, 0.5], "missing_factor_two": [0.5, 0.5, 0.5]})
    found = diagnose(problem, graded(problem, trusted, 0.5, 0.5, 0.5))
    assert (
        found == diagnosis_of(problem, "mean_loss") != diagnosis_of(problem, "missing_factor_two")
    )


def test_no_wrong_answer_or_a_case_without_outputs_means_no_diagnosis(problem: Problem) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    assert diagnose(problem, graded(problem, trusted, 1.0, 1.0, 1.0)) is None
    solution = graded(problem, trusted, 0.5, "the function returned None", 0.5)
    assert diagnose(problem, solution) is None
    del solution.cases[2]
    assert diagnose(problem, solution) is None


def test_a_mistake_without_outputs_for_a_case_does_not_match(problem: Problem) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    del trusted.mistakes["missing_factor_two"]["four-chunks"]  # it failed there
    assert diagnose(problem, graded(problem, trusted, 0.5, 0.5, 0.5)) is None
