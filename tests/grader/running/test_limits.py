"""Limits that hold for a whole sandbox, fresh or pooled: memory across every process
of a submission, /dev/shm, and the problem's own limit inside a pool sized above it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.child.verdicts import Mode, Verdict
from grader.grade import grade
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold
from grader.running.limits import sandbox_limits
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


requires_cgroups = pytest.mark.skipif(
    sandbox_limits().cgroup is None,
    reason="no usable cgroup here: memory is bounded per process only, as the start-up message says",
)

MIB = 2**20
# Two helper processes, each touching 1.2 GB: together far above the 2048 MB limit,
# each alone below it. The main process then answers correctly.
TWO_HOGS = """
import os, time
def solve(x, scale):
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            data = b"x" * (1200 * 2**20)
            time.sleep(2)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return x * scale
"""
ONE_HOG = """
def solve(x, scale):
    data = b"x" * (2500 * 2**20)
    return x * scale
"""
SHM_FILLER = """
def solve(x, scale):
    with open("/dev/shm/filler", "wb") as handle:
        for _ in range(100):
            handle.write(b"x" * 2**20)
    return x * scale
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("limits")
    scaffold("tiny", root)
    toml = root / "problems" / "tiny" / "problem.toml"
    toml.write_text(toml.read_text().replace("wall_seconds = 30", "wall_seconds = 20"))
    problem = load_problem(root / "problems" / "tiny")
    assert problem.config.limits.memory_mb == 2048
    return problem


@pytest.fixture(scope="module")
def roomy_pool() -> Iterator[WarmPool]:
    """A pool whose children start under 4096 MB: jobs must get their own, smaller limit."""
    pool = WarmPool(SandboxLauncher(), size=1, memory_mb=4096)
    yield pool
    pool.close()


@requires_cgroups
def test_this_machine_bounds_every_sandbox_with_a_cgroup() -> None:
    limits = sandbox_limits()
    assert limits.cgroup is not None, limits.describe()
    assert "memory per sandbox" in limits.describe()
    assert limits.address_space_bytes(2048, "cpu") is None  # no RLIMIT_AS to break JAX


@requires_cgroups
def test_the_memory_of_every_process_counts_together(tiny: Problem) -> None:
    report = grade(tiny, TWO_HOGS)
    assert report.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, report.message
    assert report.score == 0.0


@requires_cgroups
def test_a_pooled_job_gets_its_problems_limit_not_the_pools(
    tiny: Problem, roomy_pool: WarmPool
) -> None:
    assert grade(tiny, ONE_HOG, runner=roomy_pool).verdict is Verdict.MEMORY_LIMIT_EXCEEDED
    assert grade(tiny, TWO_HOGS, runner=roomy_pool).verdict is Verdict.MEMORY_LIMIT_EXCEEDED


def test_dev_shm_is_a_small_private_tmpfs(tiny: Problem) -> None:
    report = grade(tiny, SHM_FILLER, mode=Mode.RUN)
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "No space left on device" in report.cases[0].message
    assert not Path("/dev/shm/filler").exists()


@requires_cgroups
def test_a_waiting_sandbox_yields_the_cpu_and_a_busy_one_gets_a_full_share() -> None:
    from grader.running.cgroups import SandboxCgroup

    layout = sandbox_limits().cgroup
    assert layout is not None
    if layout.cpu_dir is None:
        pytest.skip("this host does not delegate the cpu controller: every child competes equally")
    group = SandboxCgroup(layout, max_pids=64, memory_bytes=256 * MIB)
    try:
        assert group.cpu is not None
        shares = group.cpu / ("cpu.weight" if layout.version == 2 else "cpu.shares")
        waiting = int(shares.read_text())
        group.set_busy(True)
        busy = int(shares.read_text())
        assert busy >= 64 * waiting  # a warming child gets about 1/64 of a grading's CPU
        assert f"{group.cpu}/cgroup.procs" in " ".join(group.entry_command())
    finally:
        group.remove()
