"""Credit: each part's result and the score a grading earns (problem.toml ``credit``).

A problem's graded functions are its parts (grader/problems/problem.py ``Problem.parts``;
a problem without [[parts]] has one). Each part's cases make its report; the credit
policy turns the parts' reports and the author tests' results into the score, 0 to 1:

- ``per-case``: a part earns weight x (its accepted cases / its cases); a test its
  points when it passes. One part and no tests: today's fraction of cases.
- ``per-part``: a part earns its weight only when all its cases pass.
- ``per-test``: only tests count; the cases still decide whether the verdict is accepted.
- ``all-or-nothing``: 1 when the verdict is accepted, else 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from grader.child.verdicts import Verdict
from grader.judging.report import CaseReport, PartReport
from grader.problems.problem import Credit, Part, Problem


class ScoredTest(Protocol):
    """What the credit needs of one author test's result (grader/author_tests.py)."""

    @property
    def points(self) -> float: ...

    @property
    def passed(self) -> bool: ...


def _belongs(part: Part, case: CaseReport, first: bool) -> bool:
    return case.part == part.name if case.part is not None else first


def part_reports(
    problem: Problem, cases: Sequence[CaseReport], error: Verdict | None = None
) -> list[PartReport]:
    """Each part's result from its cases' reports, in problem.toml's order; ``error``: the
    whole solution failed (a syntax error, no entry point at all), and so did every part."""
    reports = []
    for index, part in enumerate(problem.parts):
        mine = [case for case in cases if _belongs(part, case, index == 0)]
        passed = sum(case.verdict is Verdict.ACCEPTED for case in mine)
        failing = next(
            (c for c in mine if c.verdict not in (Verdict.ACCEPTED, Verdict.SKIPPED)), None
        )
        if error is not None:
            verdict, message = error, ""
        elif failing is not None:
            verdict = failing.verdict
            message = failing.message if failing.verdict is Verdict.MISSING_ENTRY_POINT else ""
        else:  # as a whole grading: accepted when nothing failed (SKIPPED is not a failure)
            verdict = Verdict.ACCEPTED if mine else Verdict.SKIPPED
            message = ""
        reports.append(
            PartReport(
                name=part.name,
                entry_point=part.entry_point,
                weight=part.weight,
                verdict=verdict,
                passed=passed if error is None else 0,
                total=len(mine),
                score=round(passed / len(mine), 4) if mine and error is None else 0.0,
                message=message,
            )
        )
    return reports


def overall_verdict(parts: Sequence[PartReport]) -> Verdict:
    """Accepted when every part is; otherwise the first failing part's verdict."""
    for part in parts:
        if part.verdict not in (Verdict.ACCEPTED, Verdict.SKIPPED):
            return part.verdict
    return Verdict.ACCEPTED if parts else Verdict.INTERNAL_ERROR


def score(
    credit: Credit,
    parts: Sequence[PartReport],
    tests: Sequence[ScoredTest] = (),
    *,
    accepted: bool,
) -> float:
    """The grading's score, 0 to 1, by ``credit`` (this module's docstring), from the
    parts' reports and the author tests' results."""
    points = sum(test.points for test in tests)
    earned_by_tests = sum(test.points for test in tests if test.passed)
    if credit is Credit.ALL_OR_NOTHING:
        return 1.0 if accepted else 0.0
    if credit is Credit.PER_TEST:
        return round(earned_by_tests / points, 4) if points else 0.0
    weights = sum(part.weight for part in parts)
    if credit is Credit.PER_PART:
        earned = sum(part.weight for part in parts if part.total and part.passed == part.total)
    else:
        earned = sum(part.weight * part.score for part in parts)
    total = weights + points
    return round((earned + earned_by_tests) / total, 4) if total else 0.0
