"""Which device a submission runs on.

`device = "cpu"` problems always run on the CPU; `"gpu"` problems need a GPU
worker (elsewhere they wait for one: the queue's job; here, a clear error);
`"any"` problems run on the CPU unless `JAXJUDGE_PREFER_GPU` is set and a GPU
is present. Reference outputs are computed on the same device kind as the
submission (the trusted-output cache is keyed by it): TF32 and reduction
order differ between CPU and GPU.
"""

from __future__ import annotations

from pathlib import Path

from grader.config import settings


class NoDeviceError(RuntimeError):
    """The problem needs a device this machine does not have."""


def gpu_available() -> bool:
    return any(Path("/dev").glob("nvidia[0-9]*"))


def device_for(problem_device: str) -> str:
    if problem_device == "cpu":
        return "cpu"
    if problem_device == "gpu":
        if not gpu_available():
            raise NoDeviceError(
                "this problem needs a GPU worker, and this machine has no GPU (/dev/nvidia0 is absent)"
            )
        return "gpu"
    return "gpu" if settings.prefer_gpu and gpu_available() else "cpu"
