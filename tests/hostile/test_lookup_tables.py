"""Learning the answers instead of computing them: a lookup table or a bisection built
on one submission's hidden inputs fails on the next submission's, because each
submission is graded on a secret random draw of the hidden inputs."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from grader import expected
from grader.cases import case_key
from grader.child.verdicts import Verdict
from grader.grade import draw_variant, grade
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.xdist_group("hostile")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("lookup")
    scaffold("tiny", root)
    return load_problem(root / "problems" / "tiny")


def lookup_table_for(problem: Problem, variant: int) -> str:
    """The best an oracle could give: every hidden answer of one variant, keyed by input bytes."""
    trusted = expected.load_or_compute(problem)
    table = {}
    for case in problem.case_bank.for_variant(variant):
        x = case.args["x"]
        expected_output = trusted.reference[case_key(case, variant)][0]
        assert isinstance(x, np.ndarray) and isinstance(expected_output, np.ndarray)
        table[x.tobytes()] = expected_output.tolist()
    return (
        "import numpy as np\n"
        f"TABLE = {table!r}\n"
        "def solve(x, scale):\n"
        "    known = TABLE.get(np.asarray(x).tobytes())\n"
        "    return np.array(known, np.float32) if known is not None else x * scale if x.shape == (3,) else x\n"
    )


def test_a_perfect_lookup_table_for_one_draw_fails_on_another(tiny: Problem) -> None:
    source = lookup_table_for(tiny, variant=0)
    assert grade(tiny, source, variant=0).verdict is Verdict.ACCEPTED  # the table is right...
    for other in (1, 7):
        report = grade(tiny, source, variant=other)
        assert report.verdict is Verdict.WRONG_ANSWER  # ...for that draw only
        assert [c.verdict for c in report.cases if c.hidden] == [Verdict.WRONG_ANSWER]


def test_the_hidden_inputs_of_every_variant_differ(tiny: Problem) -> None:
    inputs = {
        tiny.case_bank.for_variant(v)[0].args["x"].tobytes()  # type: ignore[union-attr]
        for v in range(tiny.config.variants)
    }
    assert len(inputs) == tiny.config.variants == 16


def test_each_grading_draws_its_variant_at_random(tiny: Problem) -> None:
    draws = collections.Counter(draw_variant(tiny) for _ in range(400))
    assert set(draws) <= set(range(16))
    # Uniform over 16: every variant appears (a miss has probability below 10^-9).
    assert len(draws) == 16
