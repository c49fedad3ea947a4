"""Nothing a trusted run computed, compiled or wrote is readable inside a sandbox.

A problem with distinctive reference and mistake code is prepared and checked
(trusted runs: expected outputs, the trusted compilation cache, `check`'s own
runs). Then a submission walks every directory it can read inside a sandbox, as
the sandboxed user, fresh and pooled, and reports any file that is one a
trusted run wrote (same device and inode: bind mounts keep both), any file
whose name or content holds a line of the reference or of a mistake, a
mistake's file name, the jitted reference's name, or the bytes of an expected
output. A guard test binds the trusted cache in on purpose and sees the walker
find it, so the walker is known to look.

The one cache a sandbox does read, the warm-up's (problem-independent by
construction), is written during this session, so the walker reads every file
of it for the same needles.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grader import expected
from grader.cases import case_key
from grader.check import check_problem, render
from grader.child.verdicts import Mode, Verdict
from grader.config import settings
from grader.grade import grade
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold
from grader.running.launch import LaunchSpec
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher
from grader.running.supervise import ProcessRunner

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.xdist_group("hostile")]

REFERENCE = '''"""Reference (never shown to learners)."""

import jax


@jax.jit
def reference_scaled_product_qzx(x, scale):
    return x * scale


def solve(x, scale):
    return reference_scaled_product_qzx(x, scale)
'''
MISTAKES = {
    "mistake_returns_input_wvk": '"""You returned x unchanged; multiply it by scale."""\n\n\ndef solve(x, scale):\n    unchanged_input_mistake_wvk = x\n    return unchanged_input_mistake_wvk\n',
    "mistake_adds_scale_pjq": '"""You added scale; multiply by it."""\n\n\ndef solve(x, scale):\n    added_scale_mistake_pjq = x + scale\n    return added_scale_mistake_pjq\n',
    "mistake_negates_hbn": '"""You negated the result."""\n\n\ndef solve(x, scale):\n    negated_result_mistake_hbn = -x * scale\n    return negated_result_mistake_hbn\n',
    "mistake_squares_scale_tyd": '"""You squared scale."""\n\n\ndef solve(x, scale):\n    squared_scale_mistake_tyd = x * scale * scale\n    return squared_scale_mistake_tyd\n',
}
WALKER = """
import os
TRUSTED = {trusted!r}
NEEDLES = {needles!r}
NAME_NEEDLES = {names!r}
SKIP = ("/proc", "/sys", "/dev")
walked, hits = 0, []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
    for name in files + dirs:
        path = os.path.join(root, name)
        hits += [("name", path, needle) for needle in NAME_NEEDLES if needle in path]
    for name in files:
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        walked += 1
        if (st.st_dev, st.st_ino) in TRUSTED:
            hits.append(("trusted file", path))
        if not os.path.isfile(path) or os.path.islink(path) or st.st_size > 256 * 2**20:
            continue
        if st.st_mtime < {since!r}:
            continue  # there before this test session: no trusted run of it wrote that
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        hits += [("content", path, needle[:40]) for needle in NEEDLES if needle in data]
print("WALKED", walked)
shown = dict()
for hit in hits:  # a few of each kind (and of each needle)
    key = (hit[0], hit[2] if len(hit) > 2 else "")
    shown[key] = shown.get(key, 0) + 1
    if shown[key] <= 3:
        print("HIT", hit)
def solve(x, scale):
    return x * scale
"""


@pytest.fixture(scope="module")
def problem(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("view")
    scaffold("tiny", root)
    folder = root / "problems" / "tiny"
    toml = folder / "problem.toml"
    # Op by op, the reference's own jit is a program of its own, filed in the trusted
    # cache under the reference's name: what the leaky launcher's walker looks for.
    toml.write_text(
        toml.read_text()
        .replace("wall_seconds = 30", "wall_seconds = 120")
        .replace('device = "any"', 'device = "any"\ntrusted_runs = "eager"')
    )
    for path in (folder / "mistakes").glob("*.py"):
        path.unlink()
    for name, source in MISTAKES.items():
        (folder / "mistakes" / f"{name}.py").write_text(source)
    (root / "reference_solutions" / "tiny.py").write_text(REFERENCE)
    for name in ("statement.md", "hints.md", "solution.md", "problem.toml"):
        path = folder / name
        path.write_text(path.read_text().replace("TODO(jaxjudge new)", "Done"))
    return load_problem(folder)


@pytest.fixture(scope="module")
def prepared(problem: Problem) -> Problem:
    """Every kind of trusted run has happened: `check` (which also grades in sandboxes)
    and the expected outputs of `prepare`."""
    result = check_problem(problem.folder)
    assert result.ok, render(result, verbose=True)
    expected.load_or_compute(problem)
    assert any(settings.trusted_cache_dir.iterdir()), "trusted runs filled no compilation cache"
    return problem


def trusted_files() -> set[tuple[int, int]]:
    """Device and inode of every file under the data directory written by trusted runs:
    everything but the warm-up's own cache (grader/running/warmup_cache.py), which a process
    that ran only the library warm-up filled, and which the walker still reads
    through for every needle."""
    found = set()
    for path in settings.data_dir.resolve().rglob("*"):
        if path.is_file() and not path.is_relative_to(settings.warmup_cache_dir):
            stat = path.stat()
            found.add((stat.st_dev, stat.st_ino))
    return found


def needles(problem: Problem) -> tuple[list[bytes], list[str]]:
    content: list[bytes] = []
    for path in [problem.reference_path, *(m.path for m in problem.mistakes)]:
        content += [
            line.strip().encode()
            for line in path.read_text().splitlines()
            if len(line.strip()) >= 16
        ]
    trusted = expected.load_or_compute(problem)
    for variant in range(problem.case_bank.variants):
        for case in problem.case_bank.for_variant(variant):
            for output in trusted.reference[case_key(case, variant)]:
                content.append(np.ascontiguousarray(output, "<f4").tobytes())
    names = [
        "reference_scaled_product_qzx",
        "trusted-jax",
        *(f"{m.name}.py" for m in problem.mistakes),
    ]
    return content, names


def walker(problem: Problem) -> str:
    content, names = needles(problem)
    assert all(len(needle) >= 16 for needle in content)
    return WALKER.format(
        trusted=trusted_files(), needles=content, names=names, since=SESSION_START - 5
    )


SESSION_START = time.time()


def walk(problem: Problem, runner: object) -> list[str]:
    report = grade(problem, walker(problem), mode=Mode.RUN, runner=runner)  # type: ignore[arg-type]
    assert report.verdict is Verdict.ACCEPTED, report.message or report.cases[0].message
    lines = report.stdout.splitlines()
    walked = next(int(line.split()[1]) for line in lines if line.startswith("WALKED"))
    assert walked > 10_000, "the walker saw almost nothing: it did not really walk"
    return [line for line in lines if line.startswith("HIT")]


@pytest.fixture(scope="module")
def pool() -> Iterator[WarmPool]:
    warm = WarmPool(SandboxLauncher(warm_up=True), size=1, memory_mb=2048)
    yield warm
    warm.close()


def test_a_fresh_sandbox_sees_nothing_of_trusted_runs(prepared: Problem) -> None:
    assert walk(prepared, ProcessRunner(SandboxLauncher())) == []


def test_a_pooled_sandbox_sees_nothing_of_trusted_runs(prepared: Problem, pool: WarmPool) -> None:
    assert walk(prepared, pool) == []


class LeakyLauncher(SandboxLauncher):
    """The old mistake, on purpose: the trusted compilation cache bound into the sandbox."""

    def launch(
        self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
    ) -> LaunchSpec:
        spec = super().launch(
            device=device, memory_mb=memory_mb, result_fd=result_fd, standby=standby
        )
        where = spec.argv.index("--chdir")
        cache = str(settings.trusted_cache_dir)
        spec.argv[where:where] = ["--ro-bind", cache, cache]
        return spec


def test_the_walker_finds_a_trusted_cache_when_one_is_there(prepared: Problem) -> None:
    hits = walk(prepared, ProcessRunner(LeakyLauncher()))
    assert any("trusted file" in hit for hit in hits), hits
    assert any("reference_scaled_product_qzx" in hit for hit in hits), hits


def test_the_data_directory_is_where_trusted_runs_write() -> None:
    # The inode list above is only meaningful if trusted outputs live there.
    assert settings.expected_cache_dir.is_relative_to(settings.data_dir)
    assert settings.trusted_cache_dir.is_relative_to(settings.data_dir.resolve())
    assert not Path(os.sep, "judge").exists()
