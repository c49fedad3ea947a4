"""Shared fixtures: a throwaway data directory (the trusted-output cache) for the
whole run, shared by pytest-xdist workers so each problem's reference runs once;
and the guard that keeps the markers true (see ``markers_tell_the_truth``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.check import MIN_MISTAKES
from grader.config import PROJECT_ROOT, settings
from grader.problems.source import ProblemSource
from grader.running import supervise, warmup_cache


@pytest.fixture(scope="session", autouse=True)
def isolated_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    data_dir = shared / "jaxjudge-data"
    data_dir.mkdir(exist_ok=True)
    original = settings.data_dir
    settings.data_dir = data_dir
    yield data_dir
    settings.data_dir = original


def lean_copy(slug: str, root: Path) -> Path:
    """A writable copy of problem ``slug`` and its reference under ``root`` (its
    ``problems/`` and ``reference_solutions/``) with only the first four of its known mistakes, check's minimum:
    a valid problem whose trusted runs cost half as much. Tests that break, edit or
    serve a problem need no more; every mistake of the bank is proven rejected by
    tests/problems/test_bank.py. Returns the problem's folder."""
    source = ProblemSource(root, slug)
    folder = source.folder
    shutil.copytree(ProblemSource(PROJECT_ROOT, slug).folder, folder)
    for extra in sorted((folder / "mistakes").glob("*.py"))[MIN_MISTAKES:]:
        extra.unlink()
    source.reference.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ProblemSource(PROJECT_ROOT, slug).reference, source.reference)
    return folder


@pytest.fixture
def problem_copy(tmp_path: Path) -> Path:
    """A writable copy of the scan problem and its reference (``ProblemSource.of(folder)``),
    for breaking on purpose. Returns the problem's folder."""
    return lean_copy("scan-microbatched-grads", tmp_path)


@pytest.fixture(autouse=True)
def markers_tell_the_truth(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that starts a grading child (JAX, bubblewrap) must be marked ``sandbox``,
    one that starts ``jaxjudge serve`` must be marked ``server``: otherwise it fails
    here, so ``-m "not sandbox and not server and not browser"`` is fast for real."""

    def refuse(marker: str) -> object:
        def refused(*_args: object, **_kwargs: object) -> None:
            raise AssertionError(f"this test needs @pytest.mark.{marker}")

        return refused

    if request.node.get_closest_marker("sandbox") is None:
        monkeypatch.setattr(supervise.StartedChild, "__init__", refuse("sandbox"))
        monkeypatch.setattr(warmup_cache, "_fill", refuse("sandbox"))
    if request.node.get_closest_marker("server") is None:
        from tests.app import server

        monkeypatch.setattr(server.Server, "__init__", refuse("server"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that hold a slow test run first, each module kept in one piece (its
    module fixtures start once): with two workers the long tests start early, and the
    run does not end on one worker finishing a long test alone."""
    slow = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in slow)
