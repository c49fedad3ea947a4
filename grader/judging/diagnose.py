"""Misconception feedback: does a wrong answer match a known mistake?

A submission matches a mistake when, on every case it got wrong, each of its
outputs is within the problem's tolerance of the mistake's output (shapes
included). Passing cases are ignored: a mistake and a correct solution often
agree on easy inputs. Mistakes are tried in name order; the first match wins.
Which mistakes each wrong case matches is decided as the case arrives
(grader/judging/judge.py); this module only combines them.
"""

from __future__ import annotations

from grader.child.verdicts import Verdict
from grader.judging.job import SolutionOutcome
from grader.problems.problem import Problem


def diagnose(problem: Problem, solution: SolutionOutcome) -> str | None:
    """The diagnosis of the first mistake every wrong case matches, if one does."""
    matched: list[frozenset[str]] = []
    for case in solution.cases.values():
        judged = case.judged
        if judged is not None and judged.report.verdict is Verdict.WRONG_ANSWER:
            matched.append(judged.mistakes)
    if not matched:
        return None
    common = frozenset.intersection(*matched)
    return next((m.diagnosis for m in problem.mistakes if m.name in common), None)
