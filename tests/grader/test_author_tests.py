"""Author-written tests (tests.py) on a tiny problem (``solve(x, scale)`` returns
``x * scale``) with one visible and one hidden test: a correct solution passes both, a
solution that breaks a property fails the right one, a hidden failure says nothing but
"failed", a submission that patches the tests' API gains nothing (the tests never run in
its process), and a tests.py that loops, reads outside its sandbox or draws differently
for one seed is contained and reported. One real check proves a mistake that only a test
rejects."""

from __future__ import annotations

import pytest

from grader import author_tests, tests_proof
from grader.check import check_problem
from grader.child.verdicts import Mode, Verdict
from grader.config import settings
from grader.errors import ProblemError
from grader.grade import grade
from grader.judging.feedback import learner_view
from grader.judging.report import GradeReport
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

TESTS = """\
import numpy as np

from grader.author_tests import call, test


@test(points=1, message="Doubling the scale must double the answer")
def linear_in_scale(rng):
    x = rng.normal(size=(4, 7)).astype(np.float32)
    a, b = yield [call("solve", x=x, scale=2.0), call("solve", x=x, scale=4.0)]
    np.testing.assert_allclose(2 * np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@test(points=2, message="Any batch size works", hidden=True)
def any_batch(rng):
    x = rng.normal(size=(9, 3)).astype(np.float32)
    scale = float(rng.uniform(1.0, 3.0))
    (y,) = yield [call("solve", x=x, scale=scale)]
    assert np.allclose(y, x * scale, rtol=1e-5, atol=1e-6), "not x * scale on a batch of 9"
"""
CORRECT = "def solve(x, scale):\n    return x * scale\n"
# Right on every case (shapes (3,) and (5, 2)), wrong on one test's inputs each.
BREAKS_VISIBLE = "def solve(x, scale):\n    return x * 3.0 if x.shape == (4, 7) else x * scale\n"
BREAKS_HIDDEN = "def solve(x, scale):\n    return x if x.shape == (9, 3) else x * scale\n"
# Patches everything a test could lean on, in its own process: the tests' API, the
# assertion class, numpy's comparison. The tests run elsewhere, so nothing changes.
HOSTILE = """\
import builtins, sys, types

import numpy as np

class _Never(Exception):
    pass

builtins.AssertionError = _Never
fake = types.ModuleType("grader.author_tests")
fake.test = lambda **declared: (lambda function: None)
fake.call = lambda *args, **kwargs: None
sys.modules["grader.author_tests"] = fake
try:
    import grader.author_tests as real
    real.test, real.call = fake.test, fake.call
except Exception:
    pass
np.testing.assert_allclose = lambda *args, **kwargs: None

def solve(x, scale):
    return x * 3.0 if x.shape == (4, 7) else x * scale
"""
# Forges the answer a tests sandbox gives, on its own result channel: the grader reads
# no such frame from a learner's child.
FORGER = """\
import os, sys

from grader.child import protocol

verdict = {"status": "passed", "message": ""}
forged = {"results": {"linear_in_scale": verdict, "any_batch": verdict}}
os.write(int(sys.argv[1]), protocol.encode_frame(protocol.Kind.TEST_RESULTS, forged))

def solve(x, scale):
    return x * 3.0 if x.shape == (4, 7) else x * scale
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("tiny-tests")
    scaffold("tiny", root)
    folder = root / "problems" / "tiny"
    (folder / "tests.py").write_text(TESTS)
    return load_problem(folder)


def outcomes(report: GradeReport) -> list[tuple[str, bool]]:
    return [(test.name, test.passed) for test in report.tests]


def test_a_correct_solution_passes_every_test(tiny: Problem) -> None:
    report = grade(tiny, CORRECT)
    assert report.verdict is Verdict.ACCEPTED, report.tests_error or report.message
    assert outcomes(report) == [("linear_in_scale", True), ("any_batch", True)]
    assert report.score == 1.0
    assert [case.name for case in report.cases] == ["sample", "hidden-1"]  # calls are no cases


def test_a_broken_visible_property_fails_that_test_with_its_message(tiny: Problem) -> None:
    report = learner_view(grade(tiny, BREAKS_VISIBLE, mode=Mode.RUN))
    assert report.verdict is Verdict.WRONG_ANSWER
    assert outcomes(report) == [("linear_in_scale", False)]  # a Run draws no hidden test
    assert all(case.verdict is Verdict.ACCEPTED for case in report.cases)
    message = report.tests[0].message
    assert message.startswith("Doubling the scale must double the answer\nNot equal to tolerance")
    assert report.message.startswith("Test linear_in_scale failed: Doubling the scale")


def test_a_hidden_failure_shows_neither_name_nor_message(tiny: Problem) -> None:
    report = grade(tiny, BREAKS_HIDDEN)
    assert report.verdict is Verdict.WRONG_ANSWER
    assert outcomes(report) == [("linear_in_scale", True), ("any_batch", False)]
    assert "not x * scale on a batch of 9" in report.tests[1].message  # staff read it
    assert report.score == 0.5  # (1 of the cases' weight + 1 of 3 test points) / 4
    seen = learner_view(report)
    assert seen.message == "A hidden test failed."
    assert outcomes(seen) == [("linear_in_scale", True), ("hidden test 1", False)]
    assert seen.tests[1].message == "" and seen.seconds is None
    assert "any_batch" not in seen.model_dump_json()


def test_patching_the_tests_api_in_the_submission_gains_nothing(tiny: Problem) -> None:
    report = grade(tiny, HOSTILE, mode=Mode.RUN)
    assert report.verdict is Verdict.WRONG_ANSWER
    assert outcomes(report) == [("linear_in_scale", False)]
    assert author_tests.test.__module__ == "grader.child.author_tests"  # this process's API
    forged = grade(tiny, FORGER, mode=Mode.RUN)
    assert forged.verdict is Verdict.RUNTIME_ERROR and "result channel" in forged.message
    assert outcomes(forged) == [("linear_in_scale", False)]


def test_a_tests_py_that_loops_or_reads_outside_is_contained(
    tiny: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "author_cases_seconds", 3.0)
    path = tiny.folder / "tests.py"
    secret = tiny.reference_path  # outside the sandbox: never bound there
    try:
        path.write_text(f"open({str(secret)!r}).read()\n" + TESTS)
        with pytest.raises(
            ProblemError, match=r"tests\.py.*raised (FileNotFoundError|PermissionError)"
        ):
            author_tests.draw(tiny, hidden_variant=0)
        path.write_text("while True:\n    pass\n")
        report = grade(tiny, CORRECT, mode=Mode.RUN)
        assert report.verdict is Verdict.INTERNAL_ERROR
        assert "did not finish within 3 s" in report.tests_error
        seen = learner_view(report)
        assert seen.message == author_tests.NOT_LEARNERS_FAULT and seen.tests_error == ""
    finally:
        path.write_text(TESTS)


def test_a_test_that_draws_differently_for_one_seed_is_refused(tiny: Problem) -> None:
    path = tiny.folder / "tests.py"
    try:
        path.write_text(TESTS.replace("rng.normal(size=(4, 7))", "np.random.normal(size=(4, 7))"))
        errors = tests_proof.differing_draws(tiny)  # check's first step on tests.py
        assert errors == [
            "tests.py: test linear_in_scale draws different calls for the same seed; derive"
            " every input from the rng it is given"
        ]
    finally:
        path.write_text(TESTS)


def test_check_proves_the_tests_and_a_mistake_only_a_test_rejects(tiny: Problem) -> None:
    toml = tiny.folder / "problem.toml"
    toml.write_text(toml.read_text().replace('device = "any"', 'device = "any"\nvariants = 8'))
    (tiny.folder / "mistakes" / "batch_of_nine.py").write_text(
        '"""A batch of nine rows is returned unscaled."""\n\n\n' + BREAKS_HIDDEN
    )
    try:
        result = check_problem(tiny.folder)
        assert result.ok, result.errors
        assert any(
            note.startswith("mistakes/batch_of_nine.py: rejected on all 8 variants, by a test")
            for note in result.notes
        ), result.notes
    finally:
        (tiny.folder / "mistakes" / "batch_of_nine.py").unlink()
        toml.write_text(toml.read_text().replace("\nvariants = 8", ""))
