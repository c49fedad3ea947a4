"""The sandbox every learner submission runs in: bubblewrap, limits, seccomp.

One fresh sandbox per submission, discarded afterwards:

- every namespace unshared (user, PID, network, IPC, UTS, cgroup, mount),
  `--die-with-parent`, `--new-session`, all capabilities dropped, uid 65534;
- started from a clean environment (bubblewrap itself gets only the
  allow-list, and `--clearenv` repeats it inside);
- the filesystem: read-only `/usr`, the Python installation and the
  virtualenv; the child's three source files at `/judge`; the compilation
  cache read-only; a private size-capped tmpfs at `/tmp` as the only writable
  place. Nothing of the project folder (`reference_solutions/`, `var/`,
  `problems/`) exists inside;
- limits from outside: rlimits via prlimit (address space, core, file size,
  open files), a cgroup per sandbox for processes and memory where the host
  allows it, the wall clock by killing the whole group;
- a seccomp filter (grader/seccomp.py).
"""

from __future__ import annotations

import shutil
import sys
from functools import cache
from pathlib import Path

from grader import cgroups, seccomp
from grader.config import PROJECT_ROOT, settings
from grader.runner import LaunchSpec, clean_environment, compilation_cache_env, rlimit_command

SANDBOX_HOME = "/tmp"
JUDGE_DIR = "/judge"
CHILD_FILES = ("__init__.py", "child.py", "protocol.py", "warmup.py")
BOOTSTRAP = f"import sys; sys.path.insert(0, {JUDGE_DIR!r}); from grader.child import main; main()"


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or cannot create namespaces here."""


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailableError(
            "bubblewrap (bwrap) is not installed: run `make venv` as root, or `sudo apt-get install bubblewrap`"
        )
    return path


@cache
def _cgroup_layout() -> cgroups.CgroupLayout | None:
    return cgroups.detect() if settings.use_cgroups else None


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
    args: list[str] = []
    for prefix in sorted(prefixes):
        if not str(prefix).startswith("/usr/"):
            args += ["--ro-bind", str(prefix), str(prefix)]
    return args


def _judge_binds() -> list[str]:
    args: list[str] = []
    for name in CHILD_FILES:
        args += ["--ro-bind", str(PROJECT_ROOT / "grader" / name), f"{JUDGE_DIR}/grader/{name}"]
    return args


def _gpu_binds() -> list[str]:
    args: list[str] = []
    for device in sorted(Path("/dev").glob("nvidia*")):
        args += ["--dev-bind", str(device), str(device)]
    for name in ("/proc/driver/nvidia", "/usr/local/nvidia", "/usr/local/cuda"):
        if Path(name).exists():
            args += ["--ro-bind", name, name]
    return args


def bwrap_arguments(
    *, device: str, result_fd: int, seccomp_fd: int | None, warm_up: bool = False
) -> list[str]:
    env = clean_environment(device, SANDBOX_HOME)
    # Same path inside as outside: JAX's cache keys include the cache's path
    # (through XLA's autotuning-cache option), so a different mount point
    # would miss every entry.
    cache_dir = settings.compilation_cache_dir
    cache_dir.mkdir(parents=True, exist_ok=True)
    env.update(compilation_cache_env(cache_dir, writable=False))
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
    args += ["--ro-bind", str(cache_dir), str(cache_dir)]
    args += ["--proc", "/proc", "--dev", "/dev"]
    if device == "gpu":
        args += _gpu_binds()
    args += ["--chdir", SANDBOX_HOME]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--", str(settings.child_python), "-I", "-u", "-c", BOOTSTRAP, str(result_fd)]
    return args + (["--warm-up"] if warm_up else [])


class SandboxLauncher:
    """Starts each child inside its own bubblewrap sandbox.

    ``warm_up``: exercise the libraries before HELLO (grader/warmup.py), for
    pooled children whose start-up nobody waits for."""

    def __init__(self, *, warm_up: bool = False) -> None:
        self.warm_up = warm_up

    def launch(self, *, device: str, memory_mb: int, result_fd: int) -> LaunchSpec:
        seccomp_fd = seccomp.filter_fd()
        argv = rlimit_command(memory_mb) + bwrap_arguments(
            device=device, result_fd=result_fd, seccomp_fd=seccomp_fd, warm_up=self.warm_up
        )
        # bubblewrap itself starts from the allow-list: nothing of ours leaks
        # through /proc/<pid>/environ of any process in the sandbox.
        spec = LaunchSpec(
            argv,
            {"PATH": "/usr/bin:/bin"},
            "/",
            pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
        )
        layout = _cgroup_layout()
        if layout is not None:
            group = cgroups.SandboxCgroup(
                layout,
                max_pids=settings.sandbox_max_pids,
                memory_bytes=(memory_mb + settings.sandbox_tmp_bytes // 2**20) * 2**20,
            )
            spec.argv = group.entry_command() + spec.argv
            spec.kill_all = group.kill_all
            spec.memory_killed = group.oom_killed
            spec.cleanup.append(group.remove)
        return spec
