"""Shared fixtures: a throwaway data directory (the trusted-output cache) for the
whole run, shared by pytest-xdist workers so each problem's reference runs once;
and the guard that keeps the markers true (see ``markers_tell_the_truth``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.nodeid import NodeId

from grader import author_code
from grader.check import MIN_MISTAKES
from grader.config import PROJECT_ROOT, settings
from grader.problems.source import ProblemSource
from grader.running import devices, gpu_card, supervise, warmup_cache


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


def copy_problem(slug: str, root: Path) -> ProblemSource:
    """A writable copy of the bank's problem ``slug``, folder and reference, under ``root``."""
    bank, copy = ProblemSource(PROJECT_ROOT, slug), ProblemSource(root, slug)
    shutil.copytree(bank.folder, copy.folder)
    copy.reference.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(bank.reference, copy.reference)
    return copy


def lean_copy(slug: str, root: Path) -> Path:
    """``copy_problem`` with only the first four of its known mistakes, check's minimum:
    a valid problem whose trusted runs cost half as much. Tests that break, edit or
    serve a problem need no more; every mistake of the bank is proven rejected by
    tests/problems/test_bank.py. Returns the problem's folder."""
    folder = copy_problem(slug, root).folder
    for extra in sorted((folder / "mistakes").glob("*.py"))[MIN_MISTAKES:]:
        extra.unlink()
    return folder


@pytest.fixture
def problem_copy(tmp_path: Path) -> Path:
    """A writable copy of the scan problem and its reference (``ProblemSource.of(folder)``),
    for breaking on purpose. Returns the problem's folder."""
    return lean_copy("scan-microbatched-grads", tmp_path)


NO_GPU = "no GPU on this machine (/dev/nvidia0 is absent); GPU tests run on a machine that has one"


def pytest_addoption(parser: pytest.Parser) -> None:
    # A test not marked slow that takes this long fails: three times the marker's line
    # ("ten seconds or more on two cores"), so a busy machine cannot push an ordinary
    # test over it, while a test that belongs in the slow set cannot hide among the fast.
    parser.addini("unmarked_seconds_max", "longest an unmarked test may take", default="30")


def _refusal(marker: str) -> Callable[..., None]:
    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError(f"this test needs @pytest.mark.{marker}")

    return refused


@pytest.fixture(autouse=True)
def markers_tell_the_truth(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each marker says what a test does, and a test that does it unmarked fails here:
    ``sandbox`` starts a grading child (JAX, bubblewrap), ``server`` starts `jaxjudge
    serve`, ``browser`` launches Chromium, ``gpu`` starts a child on the GPU or asks the
    card anything (nvidia-smi) (``slow``: see ``pytest_runtest_makereport``). So ``-m "not sandbox and
    not server and not browser"`` is fast for real, and ``-m "not gpu"`` never touches a
    GPU."""
    marked = {m.name for m in request.node.iter_markers()}
    if "sandbox" not in marked:
        monkeypatch.setattr(supervise.StartedChild, "__init__", _refusal("sandbox"))
        monkeypatch.setattr(warmup_cache, "_fill", _refusal("sandbox"))
        # An untrusted author's cases.py starts a sandbox of its own (grader/author_code.py).
        monkeypatch.setattr(author_code, "_run", _refusal("sandbox"))
        # So does a problem's tests.py (grader/author_tests.py).
        monkeypatch.setattr(author_code, "sandbox_frames", _refusal("sandbox"))
    if "server" not in marked:
        from tests.app import server

        monkeypatch.setattr(server.Server, "__init__", _refusal("server"))
    if "browser" not in marked:
        from playwright.sync_api import BrowserType

        monkeypatch.setattr(BrowserType, "launch", _refusal("browser"))
    if "gpu" not in marked:
        # Where there is no GPU nothing can touch one; where there is, these would.
        ask_card = gpu_card.nvidia_smi

        def no_card_query(*args: Any, **kwargs: Any) -> str | None:
            if devices.gpu_available():
                _refusal("gpu")()
            return ask_card(*args, **kwargs)

        start = supervise.StartedChild.__init__

        def cpu_only(child: supervise.StartedChild, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("device") == "gpu" and devices.gpu_available():
                _refusal("gpu")()
            start(child, *args, **kwargs)

        monkeypatch.setattr(gpu_card, "nvidia_smi", no_card_query)
        monkeypatch.setattr(supervise.StartedChild, "__init__", cpu_only)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None and not devices.gpu_available():
        pytest.skip(NO_GPU)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A passing test not marked ``slow`` that took longer than ``unmarked_seconds_max``
    (its set-up and body together) is reported failed, saying so."""
    report: pytest.TestReport = yield
    line = float(item.config.getini("unmarked_seconds_max"))
    took = item.stash.setdefault(SECONDS, 0.0) + report.duration
    item.stash[SECONDS] = took
    if (
        report.when == "call"
        and report.passed
        and took > line
        and item.get_closest_marker("slow") is None
    ):
        report.outcome = "failed"
        report.longrepr = (
            f"took {took:.1f} s (set-up and body), over the {line:g} s an unmarked test "
            "may: mark it @pytest.mark.slow"
        )
    return report


SECONDS = pytest.StashKey[float]()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules that hold a slow test run first, each module kept in one piece (its
    module fixtures start once): with two workers the long tests start early, and the
    run does not end on one worker finishing a long test alone."""
    slow = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in slow)


class XdistGroups:
    """Makes ``xdist_group`` marks do what they say. pytest-xdist 3.8's ``--dist loadgroup``
    appends a test's group to ``item._nodeid``, which pytest 9.2 no longer reads (a node's
    id lives in ``_id``): the controller saw no group, and split every group's tests, and
    their module fixtures, across workers. This copies the grouped id to where it is read;
    without ``--dist loadgroup`` nothing is written to ``_nodeid`` and it does nothing."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            grouped = item.__dict__.get("_nodeid")
            if isinstance(grouped, str) and grouped != item.nodeid:
                item._id = NodeId.parse(grouped)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(XdistGroups(), "jaxjudge-xdist-groups")
