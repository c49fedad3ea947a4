"""The grading process holds one case's outputs at a time (grader/judging/judge.py): a
submission that answers every case with the largest frame the channel takes (four
outputs of a million float64 values: 32 MiB a frame) leaves the parent's peak memory
near one frame, not one frame per case. Measured with tracemalloc, which sees the
frames' bytes and numpy's arrays alike."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from grader import expected
from grader.child.verdicts import Verdict
from grader.config import settings
from grader.grade import grade
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

MIB = 1 << 20
HIDDEN_CASES = 12
FRAME = settings.max_result_frame_bytes  # 32 MiB: four outputs of 10^6 float64
# One frame as read (its bytes), its arrays rebuilt from it, and headroom for the
# rest of a grading; every case's arrays kept would be HIDDEN_CASES frames and more.
BOUND = 2 * FRAME + 24 * MIB

FLOOD = """
import numpy as np
def solve(x, scale):
    big = np.full(1_000_000, float(np.asarray(x).ravel()[0]), dtype=np.float64)
    return big, big + 1, big + 2, big + 3
"""


@pytest.fixture(scope="module")
def four_outputs(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("memory")
    scaffold("four-outputs", root)
    folder = root / "problems" / "four-outputs"
    toml = folder / "problem.toml"
    outputs = "".join(
        f'\n[[outputs]]\nname = "out{i}"\ndescription = "shape (2,)"\n' for i in range(1, 4)
    )
    toml.write_text(
        toml.read_text()
        .replace("wall_seconds = 30", "wall_seconds = 60")
        .replace("\n# The kinds of input", outputs + "\n# The kinds of input")
    )
    cases = folder / "cases.py"
    hidden = "".join(
        f'    yield Case("hidden-{i}", args={{"x": fresh.normal(size=(2, 2)).astype(np.float32),'
        ' "scale": -3.0})\n'
        for i in range(2, HIDDEN_CASES + 1)
    )
    cases.write_text(cases.read_text().replace("\n\ndef regimes", hidden + "\n\ndef regimes"))
    (root / "reference_solutions" / "four-outputs.py").write_text(
        "def solve(x, scale):\n    y = (x * scale).ravel()[:2]\n    return y, y, y, y\n"
    )
    problem = load_problem(folder)
    assert len(problem.case_bank.for_variant(0)) == HIDDEN_CASES
    return problem


def test_every_case_a_32_mib_frame_and_the_parent_holds_about_one(four_outputs: Problem) -> None:
    trusted = expected.load_or_compute(four_outputs)
    tracemalloc.start()
    try:
        report = grade(four_outputs, FLOOD, trusted=trusted, variant=0)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.verdict is Verdict.WRONG_ANSWER, report.message
    assert len(report.cases) == 1 + HIDDEN_CASES
    assert all(case.failure == "shape" for case in report.cases)
    received = (1 + HIDDEN_CASES) * FRAME
    print(f"peak {peak / MIB:.0f} MiB while {received / MIB:.0f} MiB of frames arrived")
    assert peak < BOUND, f"peak {peak / MIB:.0f} MiB, bound {BOUND / MIB:.0f} MiB"


def test_the_bound_is_far_below_keeping_every_case(tmp_path: Path) -> None:
    # Guards the guard: the bound would catch keeping even a third of the cases' arrays.
    assert BOUND < (HIDDEN_CASES // 3) * FRAME
