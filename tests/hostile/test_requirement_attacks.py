"""Code that tries to meet a structure or memory requirement without meeting it, graded
on the real problems in a real sandbox (requirements/<slug>/*.py, annotated like
attacks/): behaving one way when analysed and another when graded, dead code, host
callbacks, a patched memory analysis, reductions in a loop the rule did not name.
Each gets its annotated verdict, never ``accepted`` (which marks a problem solved and
unlocks its walkthrough); and a correct submission of each problem still passes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT
from grader.grade import grade
from grader.problems.problem import Problem, load_problem
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.xdist_group("requirements")]

ATTACKS = sorted((Path(__file__).parent / "requirements").glob("*/*.py"))


def expected_verdicts(path: Path) -> set[Verdict]:
    found = re.search(r"^# expect: (.+)$", path.read_text(), re.MULTILINE)
    assert found, f"{path} lacks a '# expect:' line"
    return {Verdict(v.strip()) for v in found.group(1).split("|")}


@pytest.fixture(scope="module")
def pool() -> Iterator[WarmPool]:
    warm = WarmPool(SandboxLauncher(warm_up=True), size=1, memory_mb=2048)
    yield warm
    warm.close()


PROBLEMS: dict[str, Problem] = {}


def problem(slug: str) -> Problem:
    if slug not in PROBLEMS:
        PROBLEMS[slug] = load_problem(PROJECT_ROOT / "problems" / slug)
    return PROBLEMS[slug]


def test_every_problem_with_a_requirement_is_attacked() -> None:
    attacked = {path.parent.name for path in ATTACKS}
    with_requirements = {
        path.parent.name
        for path in (PROJECT_ROOT / "problems").glob("*/problem.toml")
        if re.search(r"^\[(structure|memory_budget)\]", path.read_text(), re.MULTILINE)
    }
    assert with_requirements - attacked <= {"nnx-scan-accumulation"}  # same rule as ema's
    assert attacked <= with_requirements


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_requirement_is_read_from_the_program_that_answered(attack: Path, pool: WarmPool) -> None:
    report = grade(problem(attack.parent.name), attack.read_text(), runner=pool)
    assert report.verdict in expected_verdicts(attack), (
        f"{report.verdict}: {report.message}\n"
        f"{[(c.name, c.verdict.value, c.message[:200]) for c in report.cases]}"
    )
    assert report.verdict is not Verdict.ACCEPTED


@pytest.mark.parametrize("slug", sorted({path.parent.name for path in ATTACKS}))
def test_the_reference_still_meets_it_through_the_same_path(slug: str, pool: WarmPool) -> None:
    report = grade(problem(slug), problem(slug).reference_source, runner=pool)
    assert report.verdict is Verdict.ACCEPTED, report.message
