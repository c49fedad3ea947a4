"""Shared fixtures: a throwaway data directory (the trusted-output cache) for the
whole run, shared by pytest-xdist workers so each problem's reference runs once."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT, settings


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


@pytest.fixture
def problem_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A writable copy of the scan problem and its reference, for breaking on purpose."""
    problems = tmp_path / "problems"
    references = tmp_path / "reference_solutions"
    shutil.copytree(
        PROJECT_ROOT / "problems" / "scan-microbatched-grads", problems / "scan-microbatched-grads"
    )
    references.mkdir()
    shutil.copy(PROJECT_ROOT / "reference_solutions" / "scan-microbatched-grads.py", references)
    return problems / "scan-microbatched-grads", references
