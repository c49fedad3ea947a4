"""Misconception feedback: does a wrong answer match a known mistake?

A submission matches a mistake when, on every case it got wrong, each of its
outputs is within the problem's tolerance of the mistake's output (shapes
included). Passing cases are ignored: a mistake and a correct solution often
agree on easy inputs. Mistakes are tried in name order; the first match wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from grader.expected import Outputs, TrustedOutputs
from grader.job import SolutionOutcome
from grader.problem import Problem
from grader.report import CaseReport
from grader.trees import Output, compare_output
from grader.verdicts import Verdict


def diagnose(
    problem: Problem,
    keys: list[str],
    solution: SolutionOutcome,
    reports: list[CaseReport],
    trusted: TrustedOutputs,
) -> str | None:
    """``keys[i]``: the case key (grader/cases.py) of the i-th graded case."""
    failing = []
    for position, (key, report) in enumerate(zip(keys, reports, strict=True)):
        if report.verdict is not Verdict.WRONG_ANSWER:
            continue
        outcome = solution.cases.get(position)
        if outcome is None or outcome.outputs is None:
            return None
        failing.append((key, outcome.outputs))
    if not failing:
        return None
    for mistake in problem.mistakes:
        outputs_by_case = trusted.mistakes.get(mistake.name, {})
        if all(_matches(problem, outputs, outputs_by_case.get(name)) for name, outputs in failing):
            return mistake.diagnosis
    return None


def _matches(problem: Problem, actual: Sequence[Output], mistake_outputs: Outputs | None) -> bool:
    if mistake_outputs is None:
        return False
    return all(
        compare_output(mine, theirs, problem.tolerance(index)).ok
        for index, (mine, theirs) in enumerate(zip(actual, mistake_outputs, strict=True))
    )
