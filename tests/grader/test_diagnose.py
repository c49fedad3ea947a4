"""Known-mistake matching on made-up outputs: no child, milliseconds."""

from __future__ import annotations

import numpy as np
import pytest

from grader.config import PROJECT_ROOT
from grader.diagnose import diagnose
from grader.expected import Outputs, TrustedOutputs
from grader.job import CaseOutcome, SolutionOutcome
from grader.problem import Problem, load_problem
from grader.report import CaseReport
from grader.verdicts import Verdict

KEYS = ["tiny", "four-chunks", "many-chunks@0"]


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


def graded(
    outputs: list[float], verdicts: list[Verdict]
) -> tuple[SolutionOutcome, list[CaseReport]]:
    solution = SolutionOutcome(
        cases={i: CaseOutcome(seconds=0.01, outputs=[*scalar(v)]) for i, v in enumerate(outputs)}
    )
    reports = [
        CaseReport(name=key, hidden=False, verdict=verdict)
        for key, verdict in zip(KEYS, verdicts, strict=True)
    ]
    return solution, reports


WRONG, RIGHT = Verdict.WRONG_ANSWER, Verdict.ACCEPTED


def test_a_wrong_answer_matching_a_mistake_on_every_failing_case_gets_its_diagnosis(
    problem: Problem,
) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    solution, reports = graded([0.5, 0.5, 0.5], [WRONG, WRONG, WRONG])
    found = diagnose(problem, KEYS, solution, reports, trusted)
    assert found == next(m.diagnosis for m in problem.mistakes if m.name == "missing_factor_two")


def test_within_the_problems_tolerance_still_matches(problem: Problem) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    solution, reports = graded([0.5004, 0.5, 0.4996], [WRONG, WRONG, WRONG])  # atol 1e-3
    assert diagnose(problem, KEYS, solution, reports, trusted) is not None


def test_one_failing_case_that_differs_from_the_mistake_means_no_diagnosis(
    problem: Problem,
) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    solution, reports = graded([0.5, 0.5, 0.7], [WRONG, WRONG, WRONG])
    assert diagnose(problem, KEYS, solution, reports, trusted) is None


def test_passing_cases_are_ignored(problem: Problem) -> None:
    # The mistake agrees with the reference on "tiny"; the learner passed it.
    trusted = trusted_with({"missing_factor_two": [0.9, 0.5, 0.5]})
    solution, reports = graded([1.0, 0.5, 0.5], [RIGHT, WRONG, WRONG])
    assert diagnose(problem, KEYS, solution, reports, trusted) is not None


def test_mistakes_are_tried_in_name_order_and_the_first_match_wins(problem: Problem) -> None:
    trusted = trusted_with({"mean_loss": [0.5, 0.5, 0.5], "missing_factor_two": [0.5, 0.5, 0.5]})
    solution, reports = graded([0.5, 0.5, 0.5], [WRONG, WRONG, WRONG])
    first = next(m for m in problem.mistakes if m.name == "mean_loss")
    assert diagnose(problem, KEYS, solution, reports, trusted) == first.diagnosis


def test_no_wrong_answer_or_a_case_without_outputs_means_no_diagnosis(problem: Problem) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    solution, reports = graded([1.0, 1.0, 1.0], [RIGHT, RIGHT, RIGHT])
    assert diagnose(problem, KEYS, solution, reports, trusted) is None
    solution, reports = graded([0.5, 0.5, 0.5], [WRONG, WRONG, WRONG])
    solution.cases[1] = CaseOutcome(seconds=0.01, outputs=["the function returned None"])
    assert diagnose(problem, KEYS, solution, reports, trusted) is None
    del solution.cases[2]
    assert diagnose(problem, KEYS, solution, reports, trusted) is None


def test_a_mistake_without_outputs_for_a_case_does_not_match(problem: Problem) -> None:
    trusted = trusted_with({"missing_factor_two": [0.5, 0.5, 0.5]})
    del trusted.mistakes["missing_factor_two"]["four-chunks"]  # it failed there
    solution, reports = graded([0.5, 0.5, 0.5], [WRONG, WRONG, WRONG])
    assert diagnose(problem, KEYS, solution, reports, trusted) is None
