"""The sandbox every learner submission runs in: bubblewrap, limits, seccomp.

One fresh sandbox per submission, discarded afterwards:

- every namespace unshared (user, PID, network, IPC, UTS, cgroup, mount),
  `--die-with-parent`, `--new-session`, all capabilities dropped, uid 65534;
- started from a clean environment (bubblewrap itself gets only the
  allow-list, and `--clearenv` repeats it inside);
- the filesystem: read-only `/usr`, the Python installation and the
  virtualenv; the child package (grader/child/, its sources only) below `/judge`; private
  size-capped tmpfs at `/tmp` and `/dev/shm` as the only writable places (the
  root and `/dev` that bubblewrap builds are remounted read-only);
  read-only, the compilation cache that only the library warm-up filled
  (grader/running/warmup_cache.py). Nothing else of the project folder
  (`reference_solutions/`, `problems/`, the rest of `var/`) exists inside, and
  never the trusted compilation cache: its programs are the reference and the
  mistakes in executable form;
- limits from outside (grader/running/limits.py): a cgroup per sandbox for memory
  (all processes and tmpfs pages together, set to the problem's limit when a
  job is bound to the child) and processes, rlimits via prlimit (CPU, core,
  file size, open files), the wall clock by killing the whole group;
- a seccomp filter (grader/running/seccomp.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from pathlib import Path

from grader.config import PROJECT_ROOT, settings
from grader.running import cgroups, proc_view, seccomp, warmup_cache
from grader.running.gpu_sharing import GpuSlot
from grader.running.launch import LaunchSpec, clean_environment, library_path, rlimit_command
from grader.running.limits import SandboxLimits, refuse_unbounded_gpu, sandbox_limits
from grader.running.warmup_cache import sandbox_env as warmup_cache_env
from grader.versions import interpreter_prefixes

SANDBOX_HOME = "/tmp"
JUDGE_DIR = "/judge"
# The package that runs inside (grader/child/), mounted at the same place below /judge,
# where `grader` is a namespace package holding it alone (tests/grader/child/test_package.py).
CHILD_PACKAGE = PROJECT_ROOT / "grader" / "child"
BOOTSTRAP = (
    f"import sys; sys.path.insert(0, {JUDGE_DIR!r}); from grader.child.run import main; main()"
)
# What a sandbox may start, below grader/child/: a learner's (or an untrusted author's)
# solutions, an untrusted author's cases.py (grader/author_code.py), or a problem's
# tests.py (grader/author_tests.py).
PROGRAMS = ("run", "author_cases", "author_tests")


def bootstrap(program: str) -> str:
    """The ``python -c`` program that starts ``grader.child.<program>``'s main."""
    if program not in PROGRAMS:
        raise ValueError(f"no sandboxed program {program!r}")
    return BOOTSTRAP.replace("grader.child.run", f"grader.child.{program}")


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or cannot create namespaces here."""


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailableError(
            "bubblewrap (bwrap) is not installed: run `make venv` as root, or `sudo apt-get install bubblewrap`"
        )
    return path


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/alternatives"):
        if Path(name).exists():
            args += ["--ro-bind", name, name]
    return args


def _python_binds() -> list[str]:
    """The interpreter's installation and the virtualenv, read-only, at their own paths."""
    prefixes = {Path(sys.base_prefix).resolve(), Path(sys.prefix)}
    python = Path(settings.child_python)
    prefixes.add(python.parent.parent)
    # A children's interpreter of its own (a candidate runtime) may come from another
    # installation than this process's.
    prefixes.update(interpreter_prefixes(python))
    args: list[str] = []
    for prefix in sorted(prefixes):
        if not str(prefix).startswith("/usr/"):
            args += ["--ro-bind", str(prefix), str(prefix)]
    return args


def _judge_binds() -> list[str]:
    """The child package, read-only; its bytecode folder (written by processes outside,
    trusted runs among them) hidden under an empty read-only tmpfs."""
    target = f"{JUDGE_DIR}/grader/child"
    args = ["--ro-bind", str(CHILD_PACKAGE), target]
    bytecode = CHILD_PACKAGE / "__pycache__"
    with contextlib.suppress(OSError):  # a read-only checkout: nothing writes one there
        bytecode.mkdir(exist_ok=True)
    if bytecode.is_dir():
        args += ["--size", "4096", "--tmpfs", f"{target}/__pycache__"]
        args += ["--remount-ro", f"{target}/__pycache__"]
    return args


SYSTEM_TREES = ("/usr", "/bin", "/lib", "/lib64", "/sbin")


def _holds_nothing_trusted(folder: Path) -> bool:
    """Whether ``folder`` is apart from the project and its data (references, caches):
    a library folder that reaches into them is never bound into a sandbox."""
    folder = folder.resolve()
    kept = (PROJECT_ROOT, settings.content_dir.resolve(), settings.data_dir.resolve())
    return not any(folder.is_relative_to(k) or k.is_relative_to(folder) for k in kept)


def _gpu_binds() -> list[str]:
    args: list[str] = []
    for device in sorted(Path("/dev").glob("nvidia*")):
        args += ["--dev-bind", str(device), str(device)]
    # CUDA's own trees (/usr/local/cuda, /usr/local/nvidia) are under /usr,
    # bound already: a second bind below it fails when it is a symlink. Library
    # folders the host names in LD_LIBRARY_PATH elsewhere (/opt/...) are bound too.
    for folder in library_path():
        if not any(folder.is_relative_to(tree) for tree in SYSTEM_TREES) and _holds_nothing_trusted(
            folder
        ):
            args += ["--ro-bind", str(folder), str(folder)]
    if Path("/proc/driver/nvidia").exists():
        args += ["--ro-bind", "/proc/driver/nvidia", "/proc/driver/nvidia"]
    return args


def bwrap_arguments(
    *,
    device: str,
    result_fd: int,
    memory_mb: int,
    seccomp_fd: int | None,
    warm_up: bool = False,
    warmup_cache: Path | None = None,
    program: str = "run",
) -> list[str]:
    env = clean_environment(device, SANDBOX_HOME, memory_mb)
    if warmup_cache is not None:
        env |= warmup_cache_env(warmup_cache)
    args = [
        bwrap_path(),
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--hostname",
        "sandbox",
        "--clearenv",
    ]
    for key, value in env.items():
        args += ["--setenv", key, value]
    # The private /tmp first: binds below may live under /tmp (a checkout in
    # /tmp, pytest's data directory) and must land on top of it, not under it.
    args += ["--size", str(settings.sandbox_tmp_bytes), "--tmpfs", SANDBOX_HOME]
    args += _system_binds() + _python_binds() + _judge_binds()
    if warmup_cache is not None:
        # At its own path: JAX's cache keys include the cache's location.
        args += ["--ro-bind", str(warmup_cache), str(warmup_cache)]
    # /proc's machine-wide counters replaced by the sandbox's own (grader/running/proc_view.py).
    args += ["--proc", "/proc", *proc_view.bwrap_arguments(memory_mb), "--dev", "/dev"]
    # --dev leaves /dev/shm a directory of /dev's own tmpfs, sized at half of
    # RAM: a size-capped tmpfs of its own instead (its pages count in the
    # sandbox's memory cgroup like every other).
    args += ["--perms", "1777", "--size", str(settings.sandbox_shm_bytes), "--tmpfs", "/dev/shm"]
    if device == "gpu":
        args += _gpu_binds()
    # bubblewrap builds the root (and /dev) on tmpfs mounts of its own, writable and
    # sized at half of RAM: read-only once every mount point exists, so that the
    # size-capped /tmp and /dev/shm, counted in the memory budget, are the only places
    # a submission can write.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    args += ["--chdir", SANDBOX_HOME]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--", str(settings.child_python), "-I", "-u", "-c", bootstrap(program), str(result_fd)]
    return args + (["--warm-up"] if warm_up else [])


class SandboxLauncher:
    """Starts each child inside its own bubblewrap sandbox.

    ``warm_up``: exercise the libraries before HELLO (grader/child/warmup.py), for
    pooled children whose start-up nobody waits for. The child starts under
    ``memory_mb`` (a pool's ceiling); the job's own limit replaces it when the
    job is delivered (``LaunchSpec.set_memory_limit``). ``program``: which main of
    grader/child/ it starts (``PROGRAMS``); only ``run`` reads the warm-up cache."""

    def __init__(self, *, warm_up: bool = False, program: str = "run") -> None:
        bootstrap(program)  # an unknown program fails here, not in the sandbox
        self.warm_up = warm_up
        self.program = program

    def launch(
        self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
    ) -> LaunchSpec:
        limits = sandbox_limits()
        if device == "gpu":
            refuse_unbounded_gpu(limits)
        seccomp_fd = seccomp.filter_fd()
        # A GPU child holds a slot for its whole life (grader/running/gpu_sharing.py).
        try:
            slot = GpuSlot(standby=standby) if device == "gpu" else None
        except BaseException:
            os.close(seccomp_fd)
            raise
        try:
            return self._spec(limits, device, memory_mb, result_fd, seccomp_fd, slot)
        except BaseException:
            os.close(seccomp_fd)
            if slot is not None:
                slot.release()
            raise

    def _spec(
        self,
        limits: SandboxLimits,
        device: str,
        memory_mb: int,
        result_fd: int,
        seccomp_fd: int,
        slot: GpuSlot | None,
    ) -> LaunchSpec:
        argv = rlimit_command(
            address_space_bytes=limits.address_space_bytes(memory_mb, device)
        ) + bwrap_arguments(
            device=device,
            result_fd=result_fd,
            memory_mb=memory_mb,
            seccomp_fd=seccomp_fd,
            warm_up=self.warm_up,
            warmup_cache=warmup_cache.ensure(device) if self.program == "run" else None,
            program=self.program,
        )
        # bubblewrap itself starts from the allow-list: nothing of ours leaks
        # through /proc/<pid>/environ of any process in the sandbox.
        spec = LaunchSpec(
            argv,
            {"PATH": "/usr/bin:/bin"},
            "/",
            pass_fds=(seccomp_fd,),
            address_space_bytes=lambda job_mb: limits.address_space_bytes(job_mb, device),
        )
        if limits.cgroup is not None:
            group = cgroups.SandboxCgroup(
                limits.cgroup, max_pids=settings.sandbox_max_pids, memory_bytes=memory_mb * 2**20
            )
            spec.argv = group.entry_command() + spec.argv
            spec.kill_all = group.kill_all
            spec.memory_killed = group.oom_killed
            spec.set_memory_limit = group.set_memory_limit
            spec.set_busy = group.set_busy
            spec.cpu_seconds = group.cpu_seconds
            spec.threads = group.threads
            spec.cleanup.append(group.remove)
        if slot is not None:
            spec.cleanup.append(slot.release)
        return spec
