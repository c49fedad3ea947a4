"""The bubblewrap command line a sandbox starts with (grader/running/sandbox.py): what a
child's environment says and what is bound where, CPU and GPU. The sandbox's behaviour
from inside is tests/hostile/; the GPU's own set-up is tests/grader/running/test_gpu.py."""

from __future__ import annotations

import pytest

from grader import versions
from grader.running import gpu_sharing
from grader.running.sandbox import bwrap_arguments


def _setenv(args: list[str]) -> dict[str, str]:
    return {args[i + 1]: args[i + 2] for i, arg in enumerate(args) if arg == "--setenv"}


def test_cpu_sandboxes_are_pinned_to_the_cpu_and_never_preallocate() -> None:
    args = bwrap_arguments(device="cpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    env = _setenv(args)
    assert env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert not any(arg.startswith("/dev/nvidia") for arg in args)


def test_gpu_sandboxes_share_the_card_by_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)
    env = _setenv(bwrap_arguments(device="gpu", result_fd=3, memory_mb=4096, seccomp_fd=None))
    assert "JAX_PLATFORMS" not in env
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"  # several sandboxes share one card
    assert env[versions.memory_fraction_name()] == "0.0502"


def test_no_bind_lands_below_the_already_bound_usr(monkeypatch: pytest.MonkeyPatch) -> None:
    """/usr/local/cuda is a symlink below /usr on CUDA hosts: a second bind there fails."""
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)  # no card is asked
    args = bwrap_arguments(device="gpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    targets = [args[i + 2] for i, arg in enumerate(args) if arg in ("--ro-bind", "--dev-bind")]
    assert "/usr" in targets
    assert not [t for t in targets if t.startswith("/usr/")]


@pytest.mark.gpu
def test_gpu_sandboxes_see_the_gpu_devices() -> None:
    args = bwrap_arguments(device="gpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    assert "/dev/nvidia0" in args
