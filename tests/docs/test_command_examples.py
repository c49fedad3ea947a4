"""The docs' command-line examples that need no server, run by bash as they are
written (docs/api.md's grading, docs/authoring.md's new problem from `new` to
`publish`, the user and token commands, the LMS registration), in a folder of their
own with `.venv` beside them as in a checkout; and the output the docs show for them
compared with what they printed, numbers aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT
from grader.problems.scaffold import scaffold_files
from tests.conftest import lean_copy
from tests.docs.blocks import (
    block,
    checkout_like,
    run_shell,
    shell_env,
    shown_output_matches,
    substituted,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

GRADE = block("docs/api.md", ".venv/bin/jaxjudge grade scan-microbatched-grads")
GRADE_OUTPUT = block("docs/api.md", "scan-microbatched-grads: Wrong answer")
NEW_PROBLEM = block("docs/authoring.md", ".venv/bin/jaxjudge new my-problem")
PUBLISH = block("docs/authoring.md", ".venv/bin/jaxjudge sync")
CHECK_OUTPUT = block("docs/authoring.md", "my-problem: ok")
USERS = block("docs/deployment.md", "echo 'a long password' | jaxjudge users create teacher")
INSTRUCTOR = block("docs/instructors.md", "echo 'a long password' | .venv/bin/jaxjudge users")
LMS = block("docs/lti.md", "jaxjudge lti add-platform")
AUTHOR_TESTS = block("docs/authoring.md", "import numpy as np\n\nfrom grader.author_tests")
RUN = [
    GRADE,
    GRADE_OUTPUT,
    NEW_PROBLEM,
    PUBLISH,
    CHECK_OUTPUT,
    USERS,
    INSTRUCTOR,
    LMS,
    AUTHOR_TESTS,
]


def test_the_grading_examples_grade_as_shown(tmp_path: Path) -> None:
    """`my_solution.py` is the problem's known mistake: the output the guide shows."""
    mistake = PROJECT_ROOT / "problems/scan-microbatched-grads/mistakes/averaged_chunks.py"
    (checkout_like(tmp_path) / "my_solution.py").write_text(mistake.read_text())
    readable, as_json, samples, details = run_shell(
        GRADE.text, cwd=tmp_path, env=shell_env(tmp_path)
    )
    assert [r.returncode for r in (readable, as_json, samples, details)] == [1, 1, 1, 1]
    assert shown_output_matches(GRADE_OUTPUT.text, readable.stdout) == ""
    report = json.loads(as_json.stdout)
    assert report["verdict"] == "wrong_answer" and report["problem"] == "scan-microbatched-grads"
    assert "(hidden)" not in samples.stdout and "tiny (sample)" in samples.stdout
    hidden = [line for line in details.stdout.splitlines() if "(hidden)" in line]
    assert hidden and "max abs error" in details.stdout.split(hidden[0], 1)[1]  # in full
    # And the comparison can fail: another problem's output is not this one.
    assert shown_output_matches(GRADE_OUTPUT.text, samples.stdout) != ""


def test_a_new_problem_goes_from_new_to_published_as_the_guide_says(tmp_path: Path) -> None:
    folder = checkout_like(tmp_path)
    env = shell_env(folder, JAXJUDGE_CONTENT_DIR=str(folder), EDITOR="true")
    new, check, edit = run_shell(NEW_PROBLEM.text, cwd=folder, env=env)
    assert (new.returncode, check.returncode, edit.returncode) == (0, 0, 0), (new, check)
    made = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} - {"jaxjudge.db"}
    assert made == set(scaffold_files("my-problem"))
    tree = block("docs/authoring.md", "<root>/").text
    for path in map(Path, made - {"reference_solutions/my-problem.py"}):
        assert path.name in tree or path.parent.name == "mistakes", path
    assert shown_output_matches(CHECK_OUTPUT.text, check.stdout) == "", check.stdout

    sync, recheck, publish = run_shell(PUBLISH.text, cwd=folder, env=env)
    assert (sync.returncode, recheck.returncode, publish.returncode) == (0, 0, 0), (
        sync, recheck, publish,
    )  # fmt: skip
    assert "my-problem" in sync.stdout
    assert "recorded on my-problem v1" in recheck.stdout, recheck.stdout
    assert "my-problem" in publish.stdout and "v1" in publish.stdout, publish.stdout


def test_the_account_commands_run_as_shown(tmp_path: Path) -> None:
    env = shell_env(checkout_like(tmp_path))
    (made,) = run_shell(INSTRUCTOR.text, cwd=tmp_path, env=env)
    assert made.returncode == 0 and "teacher" in made.stdout, made
    teacher, root, disable, token, listing, revoke = run_shell(
        substituted(USERS.text, {"teacher --role": "teacher2 --role", " NAME": " teacher2",
                                 "revoke teacher2 ID": "revoke teacher2 1"}),
        cwd=tmp_path,
        env=env,
    )  # fmt: skip
    assert [r.returncode for r in (teacher, root, disable, token, listing, revoke)] == [0] * 6, (
        teacher, root, disable, token, listing, revoke,
    )  # fmt: skip
    assert len(token.stdout.strip()) > 20 and "ci" in listing.stdout
    assert "revoked" in revoke.stdout


def test_an_lms_is_registered_listed_and_removed_as_shown(tmp_path: Path) -> None:
    env = shell_env(checkout_like(tmp_path))
    added, listed, removed = run_shell(
        substituted(LMS.text, {"lti remove 3": "lti remove 1"}), cwd=tmp_path, env=env
    )
    assert (added.returncode, listed.returncode, removed.returncode) == (0, 0, 0), (
        added, listed, removed,
    )  # fmt: skip
    assert "https://canvas.instructure.com" in listed.stdout and "10000000000042" in listed.stdout
    after = run_shell("jaxjudge lti list --json", cwd=tmp_path, env=env)[0]
    assert json.loads(after.stdout) == []


# Right but for the rows' order: each column sorted first (the example's first test).
ORDER_DEPENDENT = """import jax.numpy as jnp


def pairwise_sq_dists(x):
    x = jnp.sort(x, axis=0)
    diff = x[:, None, :] - x[None, :, :]
    return jnp.sum(diff * diff, axis=-1)
"""


def test_the_author_tests_example_grades_a_bank_problem(tmp_path: Path) -> None:
    """The guide's tests.py in place of pairwise-distances' own: the reference passes
    both tests; a solution that depends on the rows' order fails the first."""
    folder = lean_copy("pairwise-distances", tmp_path)
    (folder / "tests.py").write_text(AUTHOR_TESTS.text)
    reference = PROJECT_ROOT / "reference_solutions/pairwise-distances.py"
    (tmp_path / "right.py").write_text(reference.read_text())
    (tmp_path / "wrong.py").write_text(ORDER_DEPENDENT)
    env = shell_env(tmp_path, JAXJUDGE_CONTENT_DIR=str(tmp_path))
    right, wrong = run_shell(
        "jaxjudge grade pairwise-distances right.py --json\n"
        "jaxjudge grade pairwise-distances wrong.py --json",
        cwd=tmp_path,
        env=env,
    )
    passed = {t["name"]: t["passed"] for t in json.loads(right.stdout)["tests"]}
    assert passed == {"rows_are_independent": True, "hidden test 1": True}, right  # any_batch
    tests = {t["name"]: t for t in json.loads(wrong.stdout)["tests"]}
    assert not tests["rows_are_independent"]["passed"], wrong
    assert tests["rows_are_independent"]["message"].startswith("Shuffling the rows must")
