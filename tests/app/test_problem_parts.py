"""The problem page's words for a problem with several parts: each part's signature
and the credit policy (app/web/problems.py)."""

from __future__ import annotations

from pathlib import Path

from app.web.problems import credit_line, signature_of
from grader.problems.problem import load_problem
from tests.grader.parts_fixture import two_parts


def test_the_page_states_every_parts_signature_and_the_credit(tmp_path: Path) -> None:
    problem = load_problem(two_parts(tmp_path, credit="per-part"))
    assert signature_of(problem) == "def solve(x, scale):\ndef shift(x, by):"
    assert credit_line(problem) == "Credit: per part, 2 parts weighted 1, 2"


def test_one_function_graded_per_case_states_no_credit_line(problem_copy: Path) -> None:
    problem = load_problem(problem_copy)
    assert credit_line(problem) == ""
    assert signature_of(problem).startswith("def microbatched_grads(")
