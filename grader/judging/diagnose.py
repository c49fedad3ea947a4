"""Misconception feedback: does a wrong answer match a known mistake?

A submission matches a mistake when, on every case it got wrong, each of its
outputs is within the problem's tolerance of the mistake's output (shapes
included). Passing cases are ignored: a mistake and a correct solution often
agree on easy inputs. Mistakes are tried in name order; the first match wins.
With several parts, each part is diagnosed on its own wrong cases (a mistake
defines the parts it gets wrong, and has outputs for those only).
Which mistakes each wrong case matches is decided as the case arrives
(grader/judging/judge.py); this module only combines them.
"""

from __future__ import annotations

from grader.child.verdicts import Verdict
from grader.judging.job import SolutionOutcome
from grader.problems.problem import Problem


def diagnoses(problem: Problem, solution: SolutionOutcome) -> dict[str | None, str]:
    """For each part (by the name its cases' reports carry) the diagnosis of the first
    mistake every wrong case of that part matches, where one does."""
    matched: dict[str | None, list[frozenset[str]]] = {}
    for case in solution.cases.values():
        judged = case.judged
        if judged is not None and judged.report.verdict is Verdict.WRONG_ANSWER:
            matched.setdefault(judged.report.part, []).append(judged.mistakes)
    found: dict[str | None, str] = {}
    for part, sets in matched.items():
        common = frozenset.intersection(*sets)
        diagnosis = next((m.diagnosis for m in problem.mistakes if m.name in common), None)
        if diagnosis is not None:
            found[part] = diagnosis
    return found


def diagnose(problem: Problem, solution: SolutionOutcome) -> str | None:
    """The diagnosis of the first part (in problem.toml's order) that has one."""
    found = diagnoses(problem, solution)
    order = [None, *(part.name for part in problem.parts)]
    return next((found[part] for part in order if part in found), None)
