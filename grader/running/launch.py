"""How a child process is started: its environment, its outside limits, and the launchers.

A launcher turns (device, memory, result fd) into a ``LaunchSpec``: argv,
environment, working directory and the hooks the supervisor needs (kill
everything, was it the memory limit, set the job's memory limit, clean up).
``PlainLauncher`` starts an ordinary process for trusted runs (references,
mistakes, `check`); ``grader/running/sandbox.py`` has the launcher learners get.

Trusted runs use their own compilation cache (``settings.trusted_cache_dir``),
which no sandbox ever mounts: its entries are compiled references.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from grader.config import PROJECT_ROOT, settings
from grader.running.gpu_sharing import GpuSlot, gpu_environment
from grader.versions import CPU_XLA_FLAGS


def clean_environment(device: str, home: str, memory_mb: int) -> dict[str, str]:
    """The child's whole environment: an explicit allow-list, nothing inherited but,
    on a GPU, where the host keeps its driver's libraries (``library_path``).
    ``memory_mb``: on a GPU, what its allocator may grow to on the card."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
        # glibc reserves 64 MiB of address space per arena and makes up to
        # 8 arenas per core: gigabytes of reservations on a big machine.
        "MALLOC_ARENA_MAX": "2",
    }
    if device == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
        env["XLA_FLAGS"] = CPU_XLA_FLAGS  # grader/versions.py says why
    else:
        env |= gpu_environment(memory_mb)
        if folders := library_path():
            env["LD_LIBRARY_PATH"] = ":".join(str(folder) for folder in folders)
    return env


def library_path() -> list[Path]:
    """The folders of this process's ``LD_LIBRARY_PATH`` that exist, absolute ones only:
    GPU hosts that keep the driver's libcuda outside the linker's own paths (GKE's
    /usr/local/nvidia/lib64) name them there. A relative entry would resolve against
    whatever the working directory is, so it is dropped."""
    folders: list[Path] = []
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        folder = Path(entry)
        if entry and folder.is_absolute() and folder.is_dir() and folder not in folders:
            folders.append(folder)
    return folders


def cpu_seconds_for(wall_seconds: float) -> int:
    """CPU time a job may use: every core busy for the whole wall clock, plus slack.
    (XLA runs on several threads, so CPU time can exceed wall time.)"""
    return int(wall_seconds * (os.cpu_count() or 1)) + 10


def rlimit_command(*, address_space_bytes: int | None, cpu_seconds: int = 3600) -> list[str]:
    """Limits set by the kernel before Python starts, inherited by everything below."""
    limits = [
        "prlimit",
        f"--cpu={cpu_seconds}",
        "--core=0",
        f"--fsize={64 * 1024 * 1024}",
        "--nofile=1024",
        # No locked pages: a sandbox locking memory in a pattern shows in the
        # machine's counters, and nothing in a grading child needs it.
        "--memlock=0",
    ]
    if address_space_bytes is not None:
        limits.append(f"--as={address_space_bytes}")
    return [*limits, "--"]


@dataclass
class LaunchSpec:
    """How to start one child: argv, environment, extra fds, and the hooks
    the supervisor calls. ``address_space_bytes`` is what the child must lower
    its RLIMIT_AS to for a job (None: memory is bounded another way)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    pass_fds: tuple[int, ...] = ()
    kill_all: Callable[[], None] | None = None
    memory_killed: Callable[[], bool] | None = None
    set_memory_limit: Callable[[int], None] | None = None
    set_busy: Callable[..., None] | None = None  # CPU share: low while waiting (busy, boosted=)
    # The sandbox's CPU time and threads, where a cgroup counts them (grader/running/timing.py
    # measures the process tree otherwise).
    cpu_seconds: Callable[[], float | None] | None = None
    threads: Callable[[], list[int]] | None = None
    address_space_bytes: Callable[[int], int | None] = lambda _memory_mb: None
    cleanup: list[Callable[[], None]] = field(default_factory=list)


class Launcher(Protocol):
    """``standby``: the child is started ahead of need (a warm pool's); on a GPU it
    yields its slot to any child needed now (grader/running/gpu_sharing.py)."""

    def launch(
        self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
    ) -> LaunchSpec: ...


def compilation_cache_env(directory: str) -> dict[str, str]:
    """JAX's persistent compilation cache at ``directory``, written by every compile."""
    return {
        "JAX_COMPILATION_CACHE_DIR": directory,
        "JAX_COMPILATION_CACHE_MAX_SIZE": "-1",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
    }


# The project's own folder on the path, not an installation of it: the children's
# interpreter may be a candidate runtime's virtualenv that holds only the libraries
# (`jaxjudge runtime diff`, docs/operations.md).
def on_project_path(statement: str) -> str:
    """``statement`` as a ``python -c`` program that imports from this checkout."""
    return f"import sys; sys.path.insert(0, {str(PROJECT_ROOT)!r}); {statement}"


def child_argv(result_fd: int) -> list[str]:
    bootstrap = on_project_path("from grader.child.run import main; main()")
    return [str(settings.child_python), "-I", "-u", "-c", bootstrap, str(result_fd)]


class PlainLauncher:
    """A child in an ordinary process.

    ``trusted=True`` (references, mistakes, `check`): the trusted compilation
    cache, no memory limit. ``trusted=False`` runs learner code without a
    sandbox (``JAXJUDGE_SANDBOX=false``, development only): no cache, and an
    address-space limit per process as the only memory bound."""

    def __init__(self, *, trusted: bool) -> None:
        self.trusted = trusted

    def launch(
        self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
    ) -> LaunchSpec:
        workdir = tempfile.mkdtemp(prefix="jaxjudge-run-")
        env = clean_environment(device, workdir, memory_mb)
        if self.trusted:
            settings.trusted_cache_dir.mkdir(parents=True, exist_ok=True)
            env |= compilation_cache_env(str(settings.trusted_cache_dir))
        limit = None if self.trusted or device == "gpu" else memory_mb * 2**20
        try:  # last: nothing after it can fail with the slot held
            slot = GpuSlot(standby=standby) if device == "gpu" else None
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        spec = LaunchSpec(
            rlimit_command(address_space_bytes=limit) + child_argv(result_fd),
            env,
            workdir,
            address_space_bytes=lambda job_mb: None if limit is None else job_mb * 2**20,
            cleanup=[lambda: shutil.rmtree(workdir, ignore_errors=True)],
        )
        if slot is not None:
            spec.cleanup.append(slot.release)
        return spec
