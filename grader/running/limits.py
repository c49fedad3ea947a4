"""What bounds a sandbox, and by what: decided once per process, said once at start-up.

With a usable cgroup (grader/running/cgroups.py) memory is bounded per sandbox, for
all of its processes together and the tmpfs pages they write, and the
processes and threads are counted; the address space is left alone, because
an address-space limit breaks JAX on machines with many cores or a GPU
(thread stacks, allocator arenas and CUDA reserve far more address space than
they use). Without one, the fallback is an address-space limit per process on
the CPU (weaker: two processes get twice the memory) and nothing on the GPU;
the start-up message says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache

from grader.config import settings
from grader.running import cgroups

log = logging.getLogger("jaxjudge.limits")


@dataclass(frozen=True)
class SandboxLimits:
    cgroup: cgroups.CgroupLayout | None
    # What was changed on the host to make the layout usable (cgroups.Detection.steps),
    # and, where there is no layout, why (cgroups.Detection.problem, or CGROUPS_OFF).
    steps: tuple[str, ...] = ()
    cgroup_problem: str | None = None

    def address_space_bytes(self, memory_mb: int, device: str) -> int | None:
        """The RLIMIT_AS a sandbox gets: none where a cgroup bounds memory or on a GPU."""
        if self.cgroup is not None or device == "gpu":
            return None
        return memory_mb * 2**20

    def describe(self) -> str:
        tmp = f"/tmp {settings.sandbox_tmp_bytes // 2**20} MiB and /dev/shm {settings.sandbox_shm_bytes // 2**20} MiB (tmpfs)"
        common = (
            f"wall clock by the supervisor; CPU time by RLIMIT_CPU; {tmp}; "
            "files 64 MiB each by RLIMIT_FSIZE; 1024 open files; no core dumps"
        )
        if self.cgroup is not None:
            changed = f" (to get there: {'; '.join(self.steps)})" if self.steps else ""
            return (
                f"sandbox limits: memory per sandbox (every process and its tmpfs pages together) "
                f"and {settings.sandbox_max_pids} processes/threads by {self.cgroup.describe()}"
                f"{changed}; {common}; no address-space limit"
            )
        return (
            f"sandbox limits: WARNING no usable cgroup ({self.cgroup_problem}), so memory is bounded only per"
            " process by RLIMIT_AS on the CPU and not at all on a GPU, and processes are not"
            f" counted; {common}"
        )


CGROUPS_OFF = "cgroups are turned off (JAXJUDGE_USE_CGROUPS=false)"


class UnboundedGpuError(RuntimeError):
    """A GPU sandbox would start with nothing bounding its host memory."""


def refuse_unbounded_gpu(limits: SandboxLimits) -> None:
    """A GPU child has no address-space limit (CUDA reserves far more than it uses), so
    without a cgroup nothing bounds its host memory: refused unless the operator said
    otherwise (``JAXJUDGE_ALLOW_UNBOUNDED_GPU_MEMORY``)."""
    if limits.cgroup is None and not settings.allow_unbounded_gpu_memory:
        raise UnboundedGpuError(
            "GPU sandboxes need a cgroup to bound their memory, and none is usable here"
            f" ({limits.cgroup_problem}); see"
            " docs/deployment.md, 'Memory bounds', or set JAXJUDGE_ALLOW_UNBOUNDED_GPU_MEMORY=true"
            " to run them without one"
        )


def refuse_unbounded_gpu_host() -> None:
    """A worker on a GPU host may start GPU sandboxes: ``UnboundedGpuError`` at its start,
    not at its first GPU submission, when nothing would bound their memory."""
    from grader.running.devices import gpu_available

    if gpu_available():
        refuse_unbounded_gpu(sandbox_limits())


@cache
def sandbox_limits() -> SandboxLimits:
    if not settings.use_cgroups:
        limits = SandboxLimits(None, cgroup_problem=CGROUPS_OFF)
    else:
        found = cgroups.detect()
        limits = SandboxLimits(found.layout, found.steps, found.problem)
    level = logging.INFO if limits.cgroup is not None else logging.WARNING
    log.log(level, "%s", limits.describe())
    return limits
