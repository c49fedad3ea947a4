"""GPU workers: run where a GPU exists, skipped with the reason elsewhere."""

from __future__ import annotations

import pytest

from grader.devices import NoDeviceError, device_for, gpu_available
from grader.sandbox import bwrap_arguments

NO_GPU = "no GPU on this machine (/dev/nvidia0 is absent); GPU workers are tested on a machine that has one"


def test_device_choice() -> None:
    assert device_for("cpu") == "cpu"
    assert device_for("any") == "cpu"  # unless JAXJUDGE_PREFER_GPU is set
    if not gpu_available():
        with pytest.raises(NoDeviceError, match="needs a GPU worker"):
            device_for("gpu")


def test_cpu_sandboxes_are_pinned_to_the_cpu_and_never_preallocate() -> None:
    args = bwrap_arguments(device="cpu", result_fd=3, seccomp_fd=None)
    settings = {args[i + 1]: args[i + 2] for i, arg in enumerate(args) if arg == "--setenv"}
    assert settings["JAX_PLATFORMS"] == "cpu"
    assert settings["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert not any(arg.startswith("/dev/nvidia") for arg in args)


@pytest.mark.skipif(not gpu_available(), reason=NO_GPU)
def test_gpu_sandboxes_see_the_gpu_devices_and_share_memory() -> None:
    args = bwrap_arguments(device="gpu", result_fd=3, seccomp_fd=None)
    settings = {args[i + 1]: args[i + 2] for i, arg in enumerate(args) if arg == "--setenv"}
    assert "JAX_PLATFORMS" not in settings
    assert settings["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"  # several sandboxes share one GPU
    assert "/dev/nvidia0" in args
