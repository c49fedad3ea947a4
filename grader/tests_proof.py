"""What `jaxjudge check` proves of a problem's author tests (tests.py).

- A test draws the same calls for the same seed (two draws compared by digest; a
  grading's phase 3 compares them again and calls the test broken otherwise).
- The reference passes every test on every variant: one run of the reference answers
  every variant's calls (visible tests' and hidden tests' with that variant's seed), then
  each variant's tests judge their outputs.
- A mistake that no hidden case separates from the reference on some variants is still
  rejected when a test fails it on each of those variants (grader/check.py asks).

Like a grading, it runs the tests only in author-code sandboxes (grader/author_tests.py)
and the solutions in a learner's child; it holds only data.
"""

from __future__ import annotations

from grader import author_tests
from grader.errors import ProblemError
from grader.grade import learner_runner
from grader.judging.drawn_tests import AuthorTestDraw
from grader.judging.job import Solution, job_for
from grader.judging.judge import CaseJudge
from grader.judging.trees import Output
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Problem
from grader.running.timing import BACKSTOP_FACTOR

__all__ = ["differing_draws", "errors_of_tests", "failed_tests", "has_tests", "rejects"]

has_tests = author_tests.has_tests


def draws(problem: Problem, variants: list[int]) -> dict[int, AuthorTestDraw]:
    """Phase 1 of a submit on each of ``variants``, in one sandbox."""
    return dict(zip(variants, author_tests.draws(problem, list(variants)), strict=True))


def failed_tests(
    problem: Problem,
    source: str,
    drawn: dict[int, AuthorTestDraw],
    trusted: TrustedOutputs,
    device: str,
) -> dict[int, list[str]]:
    """For each variant, the tests ``source`` fails there (``name: why``): one run of
    ``source`` answers every variant's calls, each variant's tests judge theirs."""
    cases = []
    where: list[tuple[int, int, int]] = []  # (variant, test, call) by position
    for variant, draw in drawn.items():
        for hidden in (False, True):
            for index, test in draw.drawn(hidden=hidden):
                for number, case in enumerate(test.calls):
                    cases.append(case)
                    where.append((variant, index, number))
    wall = 2 * max(
        problem.config.limits.wall_seconds, BACKSTOP_FACTOR * problem.config.limits.cpu_seconds
    )
    job = job_for(
        problem,
        solutions=(Solution("solution", source),),
        cases=tuple(cases),
        wall_seconds=wall,
        memory_mb=problem.config.limits.memory_mb,
        device=device,
        compiled=True,
    )
    kept = frozenset(range(len(cases)))
    judge = CaseJudge(problem, job.all_cases, [""] * len(cases), trusted, device, kept=kept)
    outcome = learner_runner().run(job, judge)
    solution = outcome.solutions[0]
    returned: dict[int, dict[int, list[list[Output] | str]]] = {}
    for position, (variant, index, number) in enumerate(where):
        got = solution.cases.get(position)
        calls = returned.setdefault(variant, {}).setdefault(index, [])
        if got is None or got.outputs is None:
            why = solution.message or (got.message if got else "") or "it stopped"
            calls.append(f"no output ({why.strip().splitlines()[0] if why.strip() else why})")
        else:
            calls.append(got.outputs)
        assert len(calls) == number + 1
    failures: dict[int, list[str]] = {}
    judged = author_tests.judge_all(
        problem, [(draw, returned.get(variant, {})) for variant, draw in drawn.items()]
    )
    for (variant, draw), verdicts in zip(drawn.items(), judged, strict=True):
        failures[variant] = [
            f"{draw.tests[index].name}: {verdict.status}"
            + (f" ({verdict.message})" if verdict.message else "")
            for index, verdict in sorted(verdicts.items())
            if not verdict.passed
        ]
    return failures


def differing_draws(problem: Problem) -> list[str]:
    """The tests that draw different calls in two draws with the same seeds (a submit on
    variant 0), in the words of a check's error."""
    first, second = author_tests.draws(problem, [0, 0])
    errors = [
        f"tests.py: test {a.name} draws different calls for the same seed; derive every"
        " input from the rng it is given"
        for a, b in zip(first.tests, second.tests, strict=True)
        if a.digest != b.digest
    ]
    return errors


def errors_of_tests(problem: Problem, trusted: TrustedOutputs, device: str) -> list[str]:
    """What is wrong with tests.py: a test that draws differently for the same seed, or
    one the reference fails on some variant (each in the words of a check's error)."""
    try:
        errors = differing_draws(problem)
        if errors:
            return errors
        drawn = draws(problem, list(range(problem.config.variants)))
        failures = failed_tests(problem, problem.reference_source, drawn, trusted, device)
    except ProblemError as error:
        return [str(error)]
    return [
        f"tests.py: the reference fails test {failure} on variant {variant}"
        for variant, failed in failures.items()
        for failure in failed
    ]


def rejects(
    problem: Problem,
    source: str,
    variants: list[int],
    trusted: TrustedOutputs,
    device: str,
) -> bool:
    """Whether some test fails ``source`` on each of ``variants`` (a mistake's proof where
    no hidden case separates it there)."""
    try:
        failures = failed_tests(problem, source, draws(problem, variants), trusted, device)
    except ProblemError:
        return False
    return all(failures.get(variant) for variant in variants)
