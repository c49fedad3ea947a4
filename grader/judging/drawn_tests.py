"""A problem's author tests as one grading holds them: plain data (grader/author_tests.py
makes it in a sandbox; no test's code is here).

Each drawn test's calls travel to the learner's child as extra cases at the end of a
phase: a visible test's after the samples, a hidden test's after the hidden cases (a
submit only). Their outputs are kept, not compared (grader/judging/judge.py), and handed
to the tests as data once the child is done.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.cases import Case

VISIBLE_SEED = 0  # every visible test draws with it, on Run and Submit alike


def hidden_seed(variant: int) -> int:
    """Hidden tests' seed: the submission's secret draw, never the visible tests' seed."""
    return 1 + variant


@dataclass(frozen=True)
class AuthorTest:
    """One declared test and, when it was drawn for this grading, its calls (each a case
    of its part, args in the part's order) and the digest of what it drew."""

    name: str
    points: float
    message: str
    hidden: bool
    digest: str | None = None  # None: not drawn (a hidden test on a Run)
    calls: tuple[Case, ...] = ()


@dataclass(frozen=True)
class AuthorTestDraw:
    """Every declared test of a problem, in declaration order, with the seeds drawn with."""

    tests: tuple[AuthorTest, ...]
    hidden_seed: int | None = None

    def drawn(self, *, hidden: bool) -> list[tuple[int, AuthorTest]]:
        return [
            (index, test)
            for index, test in enumerate(self.tests)
            if test.hidden is hidden and test.digest is not None
        ]

    def calls(self, *, hidden: bool) -> tuple[Case, ...]:
        return tuple(case for _, test in self.drawn(hidden=hidden) for case in test.calls)

    def positions(self, first: int, hidden_first: int | None) -> dict[int, tuple[int, int]]:
        """Each call's position in a job whose visible calls start at ``first`` and whose
        hidden calls start at ``hidden_first`` (None: the job has no hidden phase), as
        (test index, call index)."""
        found: dict[int, tuple[int, int]] = {}
        starts = [(False, first)] + ([(True, hidden_first)] if hidden_first is not None else [])
        for hidden, start in starts:
            position = start
            for index, test in self.drawn(hidden=hidden):
                for call in range(len(test.calls)):
                    found[position] = (index, call)
                    position += 1
        return found
