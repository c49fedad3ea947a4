"""Trusted runs ahead of learners (app/grading/preparation.py): every reference before
any mistake, the first problems of each track first, and the progress the operators'
page shows. The trusted runs themselves are stood in for: no child is started."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.db import session_scope
from app.data import catalog
from app.grading import preparation
from grader import expected
from grader.judging.trusted import Outputs, TrustedOutputs
from grader.problems.problem import Problem, load_problem, problem_folders
from tests.app.conftest import BANK_SLUG


def test_the_first_problems_of_every_track_come_first() -> None:
    ordered = sorted(
        (load_problem(folder) for folder in problem_folders()), key=preparation.priority
    )
    positions = [problem.config.position for problem in ordered]
    assert positions == sorted(positions)
    tracks = {problem.config.track for problem in ordered}
    firsts = {problem.config.track for problem in ordered[: len(tracks)]}
    assert firsts == tracks and len(tracks) > 1


def test_references_run_before_mistakes_and_progress_is_reported(
    private_bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes: list[tuple[list[str], bool]] = []
    given: list[list[Problem]] = []

    def stand_in(
        problems: list[Problem],
        device: str = "cpu",
        workers: int | None = None,
        *,
        mistakes: bool = True,
    ) -> Iterator[tuple[Problem, TrustedOutputs | Exception]]:
        passes.append(([problem.slug for problem in problems], mistakes))
        given.append(problems)
        for problem in problems:
            outputs: dict[str, Outputs] = {
                case.name: [np.zeros(1)] for case in problem.case_bank.samples
            }
            trusted = TrustedOutputs(reference=outputs, diagnoses_ready=mistakes)
            expected.store(problem, trusted)
            yield problem, trusted

    monkeypatch.setattr(expected, "prepare_all", stand_in)
    monkeypatch.setattr(preparation, "PROGRESS", board := preparation._ProgressBoard())
    stored = preparation.prepare_versions(include_live=True)
    (references, first), (mistakes, second) = passes
    assert (first, second) == (False, True)
    # References in the learners' order; the mistakes, which no learner waits on,
    # the slowest first.
    assert mistakes == [problem.slug for problem in expected.longest_first(given[0])]
    assert sorted(references) == sorted(mistakes) and references != mistakes
    assert BANK_SLUG in references and stored >= 1
    with session_scope() as session:
        live = catalog.live_version(session=session, slug=BANK_SLUG)
        assert live is not None and catalog.stored_samples(live)  # the page has its samples
    progress = board.snapshot()
    assert progress.total == len(references)
    assert progress.gradable == references and progress.diagnosable == mistakes
    assert not progress.running and progress.references_seconds is not None

    # A restart: samples stored, outputs on disk. No run, no file read, all ready.
    passes.clear()
    preparation.prepare_versions(include_live=True)
    assert passes == [([], False), ([], True)]
    assert board.snapshot().diagnosable == references


def test_a_problem_whose_reference_fails_is_reported_and_skips_the_second_pass(
    private_bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes: list[list[str]] = []

    def failing(
        problems: list[Problem],
        device: str = "cpu",
        workers: int | None = None,
        *,
        mistakes: bool = True,
    ) -> Iterator[tuple[Problem, TrustedOutputs | Exception]]:
        passes.append([problem.slug for problem in problems])
        for problem in problems:
            yield problem, expected.ReferenceRunError("the reference failed on case 'tiny'")

    monkeypatch.setattr(expected, "prepare_all", failing)
    monkeypatch.setattr(preparation, "PROGRESS", board := preparation._ProgressBoard())
    preparation.prepare_versions(include_live=True)
    assert len(passes) == 2 and passes[1] == []
    progress = board.snapshot()
    assert progress.gradable == [] and set(progress.failed) == set(passes[0])
    assert progress.failed[BANK_SLUG] == "the reference failed on case 'tiny'"
