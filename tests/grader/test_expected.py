"""Trusted outputs with a stand-in runner: what the reference and the mistakes
produced is kept per case, cached on disk by content, and a failing reference
is an error that names the case. No child is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader import expected
from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT, settings
from grader.judging.job import CaseOutcome, Job, RunOutcome, SolutionOutcome
from grader.problems.problem import Problem, load_problem
from grader.running import gpu_sharing
from grader.running.frames import CaseListener


def array(output: object) -> np.ndarray[Any, Any]:
    assert isinstance(output, np.ndarray)
    return output


class FakeRunner:
    """Answers each case of solution ``s`` with ``s + case index`` (the reference is 0)."""

    def __init__(self, *, failing_case: int | None = None) -> None:
        self.jobs: list[Job] = []
        self.failing_case = failing_case

    def run(self, job: Job, judge: CaseListener | None = None) -> RunOutcome:
        self.jobs.append(job)
        solutions = []
        for s, _solution in enumerate(job.solutions):
            cases = {
                c: CaseOutcome(seconds=0.0, outputs=[np.array(float(s + c), dtype=np.float32)])
                for c in range(len(job.cases))
            }
            if self.failing_case is not None:
                cases[self.failing_case] = CaseOutcome(
                    seconds=0.0, error_verdict=Verdict.RUNTIME_ERROR, message="ZeroDivisionError"
                )
            solutions.append(SolutionOutcome(cases=cases))
        return RunOutcome(solutions=solutions, finished=True, wall_seconds=0.5)


@pytest.fixture
def problem(problem_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Problem:
    monkeypatch.setattr(settings, "data_dir", tmp_path / "data")
    folder = problem_copy
    return load_problem(folder)


def test_the_trusted_job_runs_the_reference_then_each_mistake_on_every_case(
    problem: Problem,
) -> None:
    job = expected.trusted_job(problem, "cpu")
    assert [s.name for s in job.solutions] == ["reference"] + [m.name for m in problem.mistakes]
    assert len(job.cases) == len(list(problem.case_bank.keyed()))
    assert not job.hidden_cases  # trusted: everything in one phase


def test_auto_compiles_trusted_runs_where_few_programs_answer_every_variant(
    problem: Problem,
) -> None:
    # scan-microbatched-grads (the problem copy): a shape group's cases share their
    # static values in every variant, so 4 programs answer all 66 cases.
    assert problem.config.trusted_runs == "auto"
    assert expected.compile_signatures(problem) * expected.CASES_PER_PROGRAM <= len(
        list(problem.case_bank.keyed())
    )
    assert expected.trusted_job(problem, "cpu").compiled
    # A seed that differs per variant makes a program per case or two: op by op.
    seeded = load_problem(PROJECT_ROOT / "problems" / "prng-layer-init")
    assert expected.compile_signatures(seeded) * expected.CASES_PER_PROGRAM > len(
        list(seeded.case_bank.keyed())
    )
    assert not expected.trusted_job(seeded, "cpu").compiled
    # What problem.toml says, when it says it, wins.
    toml = problem.folder / "problem.toml"
    toml.write_text(toml.read_text().replace("device = ", 'trusted_runs = "eager"\ndevice = ', 1))
    assert not expected.trusted_job(load_problem(problem.folder), "cpu").compiled


def test_outputs_are_kept_per_case_key_for_the_reference_and_each_mistake(
    problem: Problem,
) -> None:
    trusted = expected.compute(problem, runner=FakeRunner())
    keys = [key for key, _case in problem.case_bank.keyed()]
    assert list(trusted.reference) == keys
    assert [array(trusted.reference[key][0]).item() for key in keys[:3]] == [0.0, 1.0, 2.0]
    first_mistake = problem.mistakes[0].name
    assert array(trusted.mistakes[first_mistake][keys[0]][0]).item() == 1.0


def test_a_reference_that_fails_names_the_case(problem: Problem) -> None:
    with pytest.raises(expected.ReferenceRunError, match=r"case 'four-chunks': runtime_error"):
        expected.compute(problem, runner=FakeRunner(failing_case=1))


def test_a_mistake_that_fails_is_recorded_not_raised(problem: Problem) -> None:
    class MistakeFails(FakeRunner):
        def run(self, job: Job, judge: CaseListener | None = None) -> RunOutcome:
            outcome = super().run(job)
            outcome.solutions[1].cases[0] = CaseOutcome(seconds=0.0, outputs=["returned None"])
            return outcome

    trusted = expected.compute(problem, runner=MistakeFails())
    name = problem.mistakes[0].name
    assert trusted.mistake_errors[name] == {"tiny": "returned None"}
    assert "tiny" not in trusted.mistakes[name]


class ByName(FakeRunner):
    """Answers each case of a solution with its place among ``names`` times 1000 plus the
    case index, whichever child it is dealt to; a child holding ``timed_out`` names none
    of its cases (it was stopped by its wall clock)."""

    def __init__(self, names: list[str], timed_out: str | None = None) -> None:
        super().__init__()
        self.names, self.timed_out = names, timed_out

    def run(self, job: Job, judge: CaseListener | None = None) -> RunOutcome:
        self.jobs.append(job)
        mine = [solution.name for solution in job.solutions]
        if self.timed_out in mine:
            return RunOutcome(solutions=[SolutionOutcome() for _ in mine], timed_out=True)
        return RunOutcome(
            solutions=[
                SolutionOutcome(
                    cases={
                        c: CaseOutcome(
                            seconds=0.0,
                            outputs=[np.array(1000.0 * self.names.index(name) + c, np.float32)],
                        )
                        for c in range(len(job.cases))
                    }
                )
                for name in mine
            ],
            finished=True,
            wall_seconds=float(len(self.jobs)),
        )


def test_children_share_the_solutions_and_each_keeps_its_own_outputs(problem: Problem) -> None:
    names = ["reference", *(mistake.name for mistake in problem.mistakes)]
    alone = expected.compute(problem, runner=ByName(names))
    runner = ByName(names)
    shared = expected.compute(problem, runner=runner, children=3)
    dealt = [[solution.name for solution in job.solutions] for job in runner.jobs]
    assert len(dealt) == 3 and sorted(name for group in dealt for name in group) == sorted(names)
    assert any(group[0] == "reference" for group in dealt)
    for key, outputs in alone.reference.items():
        assert array(shared.reference[key][0]).item() == array(outputs[0]).item()
    for name, outputs_by_key in alone.mistakes.items():
        assert {k: array(o[0]).item() for k, o in shared.mistakes[name].items()} == {
            k: array(o[0]).item() for k, o in outputs_by_key.items()
        }
    assert shared.seconds == 3.0  # the slowest child's wall clock


def test_a_mistake_whose_child_timed_out_is_described_by_that_child(problem: Problem) -> None:
    # Two children: the reference, mistakes 1, 3, ... in one; mistakes 0, 2, ... in the other.
    names = ["reference", *(mistake.name for mistake in problem.mistakes)]
    first, second, third = (mistake.name for mistake in problem.mistakes[:3])
    trusted = expected.compute(problem, runner=ByName(names, timed_out=first), children=2)
    for stuck in (first, third):
        assert set(trusted.mistake_errors[stuck].values()) == {"time limit exceeded"}
        assert not trusted.mistakes[stuck]
    assert trusted.mistakes[second] and not trusted.mistake_errors[second]
    assert len(trusted.reference) == len(list(problem.case_bank.keyed()))


def test_the_disk_cache_returns_the_same_arrays_without_running_again(problem: Problem) -> None:
    runner = FakeRunner()
    first = expected.load_or_compute(problem, runner=runner)
    again = expected.load_or_compute(problem, runner=runner)
    assert len(runner.jobs) == 1 and again.from_cache
    assert again.reference.keys() == first.reference.keys()
    for key, outputs in first.reference.items():
        assert [array(o).tolist() for o in again.reference[key]] == [
            array(o).tolist() for o in outputs
        ]
        assert [array(o).dtype for o in again.reference[key]] == [array(o).dtype for o in outputs]
    assert again.mistakes.keys() == first.mistakes.keys()


def test_the_cache_key_follows_the_device_the_folder_and_the_reference(
    problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)  # no card is asked
    before = expected.cache_key(problem, "cpu")
    assert expected.cache_key(problem, "cpu") == before
    assert expected.cache_key(problem, "gpu") != before
    (problem.folder / "statement.md").write_text("changed\n")
    after_statement = expected.cache_key(problem, "cpu")
    assert after_statement != before
    problem.reference_path.write_text(problem.reference_path.read_text() + "\n# changed\n")
    assert expected.cache_key(problem, "cpu") != after_statement


def test_the_reference_alone_runs_first_and_grading_uses_it_until_the_mistakes_are_ready(
    problem: Problem,
) -> None:
    runner = FakeRunner()
    early = expected.load_or_compute(problem, runner=runner, mistakes=False)
    assert [s.name for s in runner.jobs[0].solutions] == ["reference"]
    assert not early.diagnoses_ready and early.mistakes == {}
    graded_with = expected.for_grading(problem)
    assert graded_with.from_cache and not graded_with.diagnoses_ready
    assert graded_with.reference.keys() == early.reference.keys()

    whole = expected.load_or_compute(problem, runner=runner)
    assert len(runner.jobs) == 2 and whole.diagnoses_ready
    assert set(whole.mistakes) == {m.name for m in problem.mistakes}
    # Once the whole set is there, every caller gets it, the reference-first one too.
    assert expected.for_grading(problem).diagnoses_ready
    assert expected.load_or_compute(problem, runner=runner, mistakes=False).diagnoses_ready
    assert len(runner.jobs) == 2


def test_a_worker_without_a_preparation_computes_the_whole_set(
    problem: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing on disk: the whole set unless a preparation in this process follows up."""
    runner = FakeRunner()
    monkeypatch.setattr(expected, "ProcessRunner", lambda *args, **kwargs: runner)
    assert expected.for_grading(problem).diagnoses_ready
    assert len(runner.jobs[0].solutions) == 1 + len(problem.mistakes)
    runner_first = FakeRunner()
    monkeypatch.setattr(expected, "ProcessRunner", lambda *args, **kwargs: runner_first)
    monkeypatch.setattr(settings, "data_dir", settings.data_dir / "elsewhere")
    assert not expected.for_grading(problem, reference_first=True).diagnoses_ready
    assert len(runner_first.jobs[0].solutions) == 1


def test_outputs_record_the_runtime_that_computed_them(problem: Problem) -> None:
    from grader.versions import CPU_XLA_FLAGS, runtime_versions

    expected.load_or_compute(problem, runner=FakeRunner())
    stored = expected.load_or_compute(problem, runner=FakeRunner())
    assert stored.from_cache
    assert stored.runtime["xla_flags"] == CPU_XLA_FLAGS
    assert stored.runtime["jax"] == runtime_versions()["jax"] != ""


def test_a_preparation_starts_the_problems_that_run_op_by_op_first(problem: Problem) -> None:
    seeded = load_problem(PROJECT_ROOT / "problems" / "train-with-accumulation")
    assert [p.slug for p in expected.longest_first([problem, seeded])] == [
        "train-with-accumulation",
        problem.slug,
    ]
