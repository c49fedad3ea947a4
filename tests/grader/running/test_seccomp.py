"""The seccomp filter (grader/running/seccomp.py): no sandbox starts without it. What it
refuses inside a sandbox is proven by the hostile attacks (tests/hostile/attacks/)."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.config import settings
from grader.running import seccomp
from grader.running.gpu_sharing import GpuSlot
from grader.running.sandbox import SandboxLauncher


class _NoLibseccomp(importlib.abc.MetaPathFinder):
    """What pyseccomp does on a host without libseccomp.so.2: RuntimeError at import."""

    def find_spec(self, name: str, *_args: object, **_kwargs: object) -> None:
        if name == "pyseccomp":
            raise RuntimeError("Unable to find libseccomp")


@pytest.fixture
def no_libseccomp(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delitem(sys.modules, "pyseccomp", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoLibseccomp(), *sys.meta_path])
    seccomp.filter_bpf.cache_clear()
    yield
    seccomp.filter_bpf.cache_clear()


@pytest.mark.usefixtures("no_libseccomp")
def test_without_libseccomp_the_filter_fails_closed_saying_what_to_install() -> None:
    with pytest.raises(seccomp.SeccompUnavailableError, match="install libseccomp"):
        seccomp.filter_fd()


@pytest.mark.usefixtures("no_libseccomp")
def test_without_the_filter_no_sandbox_is_launched_and_no_gpu_slot_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings, "data_dir", tmp_path)
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 1)
    monkeypatch.setattr(settings, "allow_unbounded_gpu_memory", True)  # a host with no cgroup too
    with pytest.raises(seccomp.SeccompUnavailableError):
        SandboxLauncher().launch(device="gpu", memory_mb=2048, result_fd=3)
    GpuSlot(0).release()  # the card's one slot is free: the failed launch kept nothing


def test_the_filter_is_built_where_libseccomp_is() -> None:
    seccomp.filter_bpf.cache_clear()
    program = seccomp.filter_bpf()
    assert len(program) % 8 == 0 and len(program) > 8 * len(seccomp.DENIED)
