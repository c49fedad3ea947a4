"""Problems with several parts (problem.toml [[parts]]): the schema, the cases' parts,
the credit policies, grading each part on its own, and `jaxjudge check` per part, on
the two-part problem of tests/grader/parts_fixture.py."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grader import author_code
from grader.cases import Case
from grader.check import check_problem, render
from grader.child import author_cases
from grader.child.verdicts import Verdict
from grader.errors import ProblemError
from grader.grade import grade
from grader.judging import credit
from grader.judging.report import GradeReport, PartReport, render_text
from grader.problems.problem import Credit, Problem, load_problem
from tests.grader.parts_fixture import REFERENCE, two_parts

# Right on the shift part's sample (x of shape (3,)), wrong on its hidden case.
SHIFT_RIGHT_ON_THE_SAMPLE = REFERENCE.replace(
    "return x + by", "return x + by if x.shape == (3,) else x - by"
)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return two_parts(tmp_path)


def test_parts_load_with_their_own_arguments_outputs_and_weights(folder: Path) -> None:
    problem = load_problem(folder)
    assert [(p.name, p.entry_point, p.arguments, p.weight) for p in problem.parts] == [
        ("scale", "solve", ("x", "scale"), 1.0),
        ("shift", "shift", ("x", "by"), 2.0),
    ]
    assert problem.config.credit is Credit.PER_CASE
    shift = problem.part_of(problem.case_bank.samples[1])
    assert shift.name == "shift" and shift.signature == "def shift(x, by):"
    assert problem.tolerance(0, part=shift).rtol == 1e-5  # the problem's, no own
    mistake = next(m for m in problem.mistakes if m.name == "subtracts")
    assert [p.name for p in problem.parts_defined_by(mistake.source)] == ["shift"]


def test_a_single_function_problem_is_one_implicit_part(problem_copy: Path) -> None:
    problem = load_problem(problem_copy)
    (part,) = problem.parts
    assert (part.name, part.entry_point, part.weight) == ("microbatched_grads",) * 2 + (1.0,)
    assert not problem.has_parts and problem.part_of(problem.case_bank.samples[0]) is part


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'credit = "per-case"',
            'credit = "per-case"\nentry_point = "solve"',
            "problem.toml: a problem with [[parts]] states each part's entry_point, arguments"
            " and [[parts.outputs]]; remove the top-level entry_point",
        ),
        (
            'name = "shift"\n',
            'name = "scale"\n',
            "parts: each part needs its own name; 'scale' is repeated",
        ),
        ("weight = 2", "weight = 0", "parts #2.weight: 0 is out of range: it must be more than 0"),
        ('credit = "per-case"', 'credit = "by-luck"', "credit: 'by-luck' is not allowed"),
        (
            'credit = "per-case"',
            'credit = "per-test"',
            "credit: 'per-test' counts author tests only, and this problem has no tests.py",
        ),
    ],
)
def test_schema_errors_of_parts_are_in_the_authors_words(
    folder: Path, old: str, new: str, message: str
) -> None:
    edit(folder / "problem.toml", old, new)
    with pytest.raises(ProblemError) as raised:
        load_problem(folder)
    assert message in str(raised.value)


def test_without_parts_or_a_function_the_schema_says_what_is_missing(folder: Path) -> None:
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text().split("[[parts]]")[0])
    with pytest.raises(ProblemError, match=r"entry_point, arguments, outputs are required"):
        load_problem(folder)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'Case("shift-sample", part="shift", ',
            'Case("shift-sample", ',
            "case 'shift-sample': names no part",
        ),
        (
            'Case("shift-hidden", part="shift"',
            'Case("shift-hidden", part="shove"',
            "case 'shift-hidden': names part 'shove', which problem.toml does not state",
        ),
        (
            'Case("shift-hidden", part="shift", args={"x": fresh.normal(size=(4,)).astype(np.float32), "by"',
            'Case("shift-hidden", part="shift", args={"x": fresh.normal(size=(4,)).astype(np.float32), "scale"',
            "case 'shift-hidden': arguments ['x', 'scale'] do not match problem.toml arguments ['x', 'by']",
        ),
        (
            'Case("shift-hidden", part="shift", ',
            'Case("shift-hidden", part="shift", sample=True, ',
            "part 'shift' needs at least one sample case and one hidden case",
        ),
    ],
)
def test_cases_name_their_part(folder: Path, old: str, new: str, message: str) -> None:
    edit(folder / "cases.py", old, new)
    with pytest.raises(ProblemError) as raised:
        load_problem(folder).case_bank  # noqa: B018
    assert message in str(raised.value)


def test_a_case_of_a_problem_without_parts_names_none(problem_copy: Path) -> None:
    edit(problem_copy / "cases.py", "sample=sample,\n", 'sample=sample,\n        part="grads",\n')
    with pytest.raises(ProblemError, match=r"names a part, and problem\.toml has no"):
        load_problem(problem_copy).case_bank  # noqa: B018


def test_an_untrusted_authors_case_keeps_its_part_through_the_sandboxs_data() -> None:
    x = np.ones(3, dtype=np.float32)
    meta, data = author_cases._encode_cases(
        [author_cases.Case("a", {"x": x, "by": 1.0}, sample=True, part="shift")]
    )
    (case,) = author_code._cases(Path("cases.py"), meta, data)
    assert isinstance(case, Case) and case.part == "shift" and case.sample


def _part(name: str, weight: float, passed: int, total: int) -> PartReport:
    verdict = Verdict.ACCEPTED if passed == total else Verdict.WRONG_ANSWER
    return PartReport(
        name=name,
        entry_point=name,
        weight=weight,
        verdict=verdict,
        passed=passed,
        total=total,
        score=passed / total,
    )


class _Test:
    def __init__(self, points: float, passed: bool) -> None:
        self.points, self.passed = points, passed


def test_each_credit_policy_scores_the_same_parts_its_own_way() -> None:
    parts = [_part("scale", 1, 2, 2), _part("shift", 2, 1, 2)]
    assert credit.score(Credit.PER_CASE, parts, accepted=False) == round(2 / 3, 4)
    assert credit.score(Credit.PER_PART, parts, accepted=False) == round(1 / 3, 4)
    assert credit.score(Credit.ALL_OR_NOTHING, parts, accepted=False) == 0.0
    assert credit.score(Credit.ALL_OR_NOTHING, parts[:1], accepted=True) == 1.0
    tests = [_Test(3, True), _Test(1, False)]
    assert credit.score(Credit.PER_CASE, parts, tests, accepted=False) == round(5 / 7, 4)
    assert credit.score(Credit.PER_PART, parts, tests, accepted=False) == round(4 / 7, 4)
    assert credit.score(Credit.PER_TEST, parts, tests, accepted=False) == 0.75
    # One part, no tests: the fraction of cases, as before parts existed.
    assert credit.score(Credit.PER_CASE, [_part("solve", 1, 2, 3)], accepted=False) == 0.6667
    assert credit.overall_verdict(parts) is Verdict.WRONG_ANSWER


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    return load_problem(two_parts(tmp_path_factory.mktemp("parts"), wall_seconds=8))


@pytest.mark.sandbox
@pytest.mark.slow  # the trusted runs of a reference and four mistakes, then four gradings
def test_each_part_is_graded_and_credited_on_its_own(graded: Problem) -> None:
    right = grade(graded, REFERENCE)
    assert right.verdict is Verdict.ACCEPTED and right.score == 1.0
    assert [(p.name, p.verdict, p.passed, p.total) for p in right.parts] == [
        ("scale", Verdict.ACCEPTED, 2, 2),
        ("shift", Verdict.ACCEPTED, 2, 2),
    ]

    wrong = grade(graded, REFERENCE.replace("x + by", "x - by"))
    assert wrong.verdict is Verdict.WRONG_ANSWER and wrong.credit == "per-case"
    assert [p.verdict for p in wrong.parts] == [Verdict.ACCEPTED, Verdict.WRONG_ANSWER]
    assert wrong.score == round(1 / 3, 4)  # scale's weight 1 of 3
    assert wrong.diagnosis == "You subtracted by; shift x up by it."
    assert wrong.parts[1].diagnosis == wrong.diagnosis and wrong.parts[0].diagnosis is None
    assert {c.part for c in wrong.cases} == {"scale", "shift"}
    text = render_text(wrong)
    assert "Parts (credit per-case):" in text and "shift (`shift`, weight 2): 0/2 cases" in text

    half = grade(graded, SHIFT_RIGHT_ON_THE_SAMPLE)
    assert half.score == round((1 + 2 * 0.5) / 3, 4)  # per case
    by_part = {policy: credit.score(policy, half.parts, accepted=False) for policy in Credit}
    assert by_part[Credit.PER_PART] == round(1 / 3, 4)  # shift earns nothing until whole
    assert by_part[Credit.ALL_OR_NOTHING] == 0.0
    strict = replace(graded, config=graded.config.model_copy(update={"credit": Credit.PER_PART}))
    assert grade(strict, SHIFT_RIGHT_ON_THE_SAMPLE).score == round(1 / 3, 4)

    missing = grade(graded, "def solve(x, scale):\n    return x * scale\n")
    assert missing.verdict is Verdict.MISSING_ENTRY_POINT
    assert missing.message == "`shift` was not found at the top level of your code."
    assert [p.verdict for p in missing.parts] == [Verdict.ACCEPTED, Verdict.MISSING_ENTRY_POINT]
    assert missing.score == round(1 / 3, 4)  # the learner gets the parts that pass
    stored = GradeReport.model_validate_json(missing.model_dump_json())
    assert stored.parts == missing.parts


@pytest.mark.sandbox
@pytest.mark.slow  # a whole `jaxjudge check` of the two-part problem (about 20 s)
def test_check_proves_each_part_and_each_mistake_on_its_own_parts(tmp_path: Path) -> None:
    folder = two_parts(tmp_path)
    # The starter gets the scale part right: each part must be left to the learner.
    edit(
        folder / "starter.py",
        "def solve(x, scale):\n    return jnp.zeros_like(x)",
        "def solve(x, scale):\n    return x * scale",
    )
    result = check_problem(folder)
    report = render(result)
    assert result.errors == [
        "starter.py: part 'scale' is accepted as it is; the starter must leave every part's"
        " work to the learner"
    ], report
    assert any(
        re.match(r"mistakes/subtracts\.py \(part shift\): rejected on all 16 variants", note)
        for note in result.notes
    ), report
    assert any(
        note.startswith("mistakes/adds_scale.py (part scale): rejected") for note in result.notes
    )
