"""The problem-folder contract: every broken folder gets an error naming the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.errors import ProblemError
from grader.problems.problem import load_problem
from grader.problems.source import ProblemSource


def load(folder: Path) -> None:
    problem = load_problem(folder)
    problem.case_bank  # noqa: B018


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def test_a_valid_folder_loads(problem_copy: Path) -> None:
    folder = problem_copy
    problem = load_problem(folder)
    assert problem.config.entry_point == "microbatched_grads"
    assert len(problem.mistakes) == len(list((folder / "mistakes").glob("*.py")))
    assert all(m.diagnosis and "\n" not in m.diagnosis for m in problem.mistakes)
    assert len(problem.case_bank.samples) == 2
    assert problem.case_bank.variants == problem.config.variants == 16
    assert len(problem.hints) == 3


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        (
            "problem.toml",
            'difficulty = "easy"',
            'difficulty = "trivial"',
            "difficulty: 'trivial' is not allowed: use 'easy', 'medium' or 'hard'",
        ),
        (
            "problem.toml",
            "rtol = 1e-4",
            'rtol = "tight"',
            "tolerance.rtol: 'tight' is not allowed: use a number",
        ),
        (
            "problem.toml",
            "rtol = 1e-4",
            "rtol = -1.0",
            "tolerance.rtol: -1.0 is out of range: it must be at least 0",
        ),
        (
            "problem.toml",
            'device = "any"',
            'device = "any"\ncolour = "blue"',
            "colour: unknown field; allowed here: title, track,",
        ),
        ("problem.toml", "position = 3", "", "problem.toml: position: is required and missing"),
        (
            "problem.toml",
            'entry_point = "microbatched_grads"',
            'entry_point = "micro batched"',
            "entry_point: 'micro batched' is not allowed: use a Python name",
        ),
        (
            "problem.toml",
            '"n_microbatches"]',
            '"w"]',
            "arguments: argument names must be unique; one is repeated",
        ),
        ("problem.toml", "title = ", "title = = ", "invalid TOML syntax"),
        (
            "problem.toml",
            "wall_seconds = 30",
            "wall_seconds = 0",
            "limits.wall_seconds: 0 is out of range: it must be more than 0",
        ),
        (
            "cases.py",
            '"w": float(w)',
            '"w": int(w)',
            "cases.py: case 'tiny', argument 'w': must be a Python float, a float32 numpy array or a dict of them, got int",
        ),
        (
            "cases.py",
            "x.astype(np.float32)",
            "x",
            "cases.py: case 'tiny', argument 'x_full': arrays must be float32, got float64",
        ),
        (
            "cases.py",
            '"b": float(b),',
            "",
            "cases.py: case 'tiny': arguments ['w', 'x_full', 'y_full', 'n_microbatches'] do not match",
        ),
        (
            "cases.py",
            'yield _case("few-large-chunks"',
            'yield _case("tiny"',
            "cases.py: case 'tiny': duplicate case name",
        ),
        (
            "cases.py",
            "rng = np.random",
            "rng = 1 / 0\n    rng = np.random",
            "cases.py: cases(): raised ZeroDivisionError: division by zero (line 11)",
        ),
        (
            "cases.py",
            "def cases(seed):",
            "def generate(seed):",
            "cases.py: cases: cases.py must define a function cases(seed)",
        ),
        (
            "cases.py",
            "def cases(seed):",
            "def cases():\n    seed = 0",
            "cases.py: cases: cases() must take one argument, the variant's seed",
        ),
        (
            "cases.py",
            "fresh = 100 * (seed + 1)",
            "fresh = 0",
            "cases.py: case 'many-chunks': its inputs are the same for seeds 0 and 1;"
            " derive hidden inputs from the seed",
        ),
        (
            "cases.py",
            'yield _case("tiny", n=8,',
            'yield _case("tiny", n=8 + seed,',
            "cases.py: case 'tiny': a sample differs between seeds 0 and 1;"
            " samples must not depend on the seed",
        ),
        (
            "cases.py",
            'yield _case("many-chunks", n=96,',
            'yield _case("many-chunks", n=96 + seed,',
            "cases.py: case 'many-chunks', argument 'x_full': its shape differs between seeds 0 and 1",
        ),
        (
            "cases.py",
            'yield _case("few-large-chunks",',
            'if seed < 3:\n        yield _case("few-large-chunks",',
            "cases.py: cases(): seed 3 gives hidden cases",
        ),
        (
            "problem.toml",
            'device = "any"',
            'device = "any"\nvariants = 4',
            "variants: 4 is out of range: it must be at least 8",
        ),
        (
            "cases.py",
            "sample=True)",
            "sample=False)",
            "cases.py: cases(): at least one case must be a sample",
        ),
        ("mistakes/averaged_chunks.py", '"""You divided', '"""\n\nYou divided', None),
        (
            "mistakes/averaged_chunks.py",
            '"""You divided the accumulated gradient by the number of micro-batches;'
            ' this problem asks for their sum."""',
            "",
            "mistakes/averaged_chunks.py: docstring: a mistake starts with a docstring",
        ),
    ],
)
def test_broken_folders_name_file_and_field(
    problem_copy: Path, file: str, old: str, new: str, message: str | None
) -> None:
    folder = problem_copy
    edit(folder / file, old, new)
    if message is None:
        load(folder)  # a docstring starting with a blank line is still fine
        return
    with pytest.raises(ProblemError) as caught:
        load(folder)
    assert message in str(caught.value)
    assert "Traceback" not in str(caught.value)


@pytest.mark.parametrize(
    "name", ["statement.md", "starter.py", "hints.md", "solution.md", "problem.toml"]
)
def test_missing_files_are_named(problem_copy: Path, name: str) -> None:
    folder = problem_copy
    (folder / name).unlink()
    with pytest.raises(ProblemError, match=rf"{name}: missing"):
        load(folder)


def test_empty_statement_is_an_error(problem_copy: Path) -> None:
    folder = problem_copy
    (folder / "statement.md").write_text("  \n")
    with pytest.raises(ProblemError, match=r"statement\.md: is empty"):
        load(folder)


def test_missing_reference_is_named(problem_copy: Path) -> None:
    folder = problem_copy
    ProblemSource.of(folder).reference.unlink()
    with pytest.raises(
        ProblemError,
        match=r"scan-microbatched-grads\.py: missing: the reference solution lives here",
    ):
        load(folder)


def test_per_output_tolerance_overrides_the_default(problem_copy: Path) -> None:
    folder = problem_copy
    edit(
        folder / "problem.toml",
        'with respect to w"',
        'with respect to w"\ntolerance = { rtol = 0.5, atol = 0.25 }',
    )
    problem = load_problem(folder)
    assert problem.tolerance(0).rtol == 0.5
    assert problem.tolerance(0).atol == 0.25
    assert problem.tolerance(0, "gpu") == problem.tolerance(0)  # none stated for the GPU
    assert problem.tolerance_devices == ("cpu",)


def test_a_gpu_tolerance_holds_on_the_gpu_alone(problem_copy: Path) -> None:
    folder = problem_copy
    edit(
        folder / "problem.toml", "[limits]", "[tolerance.gpu]\nrtol = 3e-4\natol = 2e-3\n\n[limits]"
    )
    problem = load_problem(folder)
    assert (problem.tolerance(0, "gpu").rtol, problem.tolerance(0, "gpu").atol) == (3e-4, 2e-3)
    assert (problem.tolerance(0).rtol, problem.tolerance(0).atol) == (1e-4, 1e-3)
    assert problem.tolerance_devices == ("cpu", "gpu")
    edit(folder / "problem.toml", "[tolerance.gpu]\nrtol = 3e-4", "[tolerance.gpu]\nrtol = -1")
    with pytest.raises(ProblemError, match=r"tolerance\.gpu\.rtol: -1 is out of range"):
        load_problem(folder)
