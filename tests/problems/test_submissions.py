"""The annotated submissions in tests/submissions/ get exactly their expected verdicts
(and, for wrong answers, the expected diagnosis). See tests/submissions/README.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT
from grader.grade import grade
from grader.problems.problem import load_problem, problem_folders

SUBMISSIONS = sorted((PROJECT_ROOT / "tests" / "submissions").glob("*/*.py"))


def header(text: str, key: str) -> str | None:
    found = re.search(rf"^# {key}: (.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else None


def test_every_problem_has_accepted_alternatives_and_diagnosed_mistakes() -> None:
    by_problem: dict[str, list[str]] = {}
    for path in SUBMISSIONS:
        by_problem.setdefault(path.parent.name, []).append(header(path.read_text(), "expect") or "")
    assert set(by_problem) == {folder.name for folder in problem_folders()}  # every problem
    for slug, expectations in by_problem.items():
        assert expectations.count("accepted") >= 2, slug
        assert expectations.count("wrong_answer") >= 1, slug


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("path", SUBMISSIONS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_submission_gets_its_annotated_verdict(path: Path) -> None:
    text = path.read_text()
    expected = Verdict(header(text, "expect") or "missing `# expect:` header")
    problem = load_problem(PROJECT_ROOT / "problems" / path.parent.name)
    report = grade(problem, text)
    failing = [
        (c.name, c.verdict.value, c.message)
        for c in report.cases
        if c.verdict is not Verdict.ACCEPTED
    ]
    assert report.verdict is expected, f"{report.message}\n{failing}"
    if expected is Verdict.WRONG_ANSWER:
        mistake = header(text, "diagnosis")
        assert mistake is not None, "wrong answers must say which diagnosis they expect (or none)"
        want = (
            None
            if mistake == "none"
            else next(m.diagnosis for m in problem.mistakes if m.name == mistake)
        )
        assert report.diagnosis == want
    if expected is Verdict.ACCEPTED:
        assert report.score == 1.0
    per_case = case_verdicts(header(text, "cases"))
    for name, verdict in per_case.items():
        graded = [c.verdict for c in report.cases if c.name.split("@")[0] == name]
        assert graded, f"no case named {name!r}"
        assert set(graded) == {verdict}, f"{name}: {graded}"


def case_verdicts(line: str | None) -> dict[str, Verdict]:
    """``# cases: tiny=accepted four-chunks=wrong_answer`` (DMOJ's per-case expectations)."""
    pairs = (item.partition("=") for item in (line or "").split())
    return {name: Verdict(verdict) for name, _, verdict in pairs}


def test_per_case_expectations_are_read_by_name() -> None:
    assert case_verdicts("tiny=accepted many-chunks=wrong_answer") == {
        "tiny": Verdict.ACCEPTED,
        "many-chunks": Verdict.WRONG_ANSWER,
    }
    assert case_verdicts(None) == {}
    with pytest.raises(ValueError, match="'AC' is not a valid Verdict"):
        case_verdicts("tiny=AC")
