"""What a sandbox sees of the machine in /proc: itself, never its neighbours.

A sandbox mounts a /proc of its own PID namespace, so it sees its own processes
only. But some files of every /proc describe the whole machine, and change with
what any process does: the memory in use (``meminfo``, ``vmstat``, ``zoneinfo``),
the CPU time spent and the runnable count (``stat``, ``loadavg``, ``uptime``'s idle
time, ``schedstat``, ``pressure/``), interrupts, disk traffic, file locks, the
open-file count. One sandbox that allocates, spins or locks in a pattern is read
by another that prints those files: a channel between two learners' code, one of
them holding hidden inputs.

Each such file is replaced here, as LXCFS does for containers, by a fixed one
written once per (memory, CPU count): ``meminfo`` says the sandbox's own memory
(all of it free), ``stat`` its CPUs with no time spent (glibc and Python count CPUs
from it where ``/sys`` is absent), ``loadavg`` and ``uptime`` nothing running;
the rest are empty. Files of a newer kernel that the host does not have are
skipped (bubblewrap cannot mount over what is not there).

What stays machine-wide is what no file carries: how fast the CPU and memory
serve a sandbox while others run (docs/security.md, "Between two sandboxes").
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from grader.config import settings

PROC = Path("/proc")
# Machine-wide files whose content another process's activity changes; emptied.
EMPTIED = (
    "vmstat",
    "zoneinfo",
    "buddyinfo",
    "pagetypeinfo",
    "slabinfo",
    "vmallocinfo",
    "allocinfo",
    "schedstat",
    "softirqs",
    "interrupts",
    "diskstats",
    "partitions",
    "locks",
    "key-users",
    "keys",
    "cgroups",
    "timer_list",
    "sched_debug",
    "latency_stats",
    "kpagecount",
    "kpageflags",
    "kpagecgroup",
    "sys/fs/file-nr",
    "sys/fs/inode-nr",
    "sys/fs/inode-state",
    "sys/fs/dentry-state",
    "sys/fs/aio-nr",
    "sys/kernel/pty/nr",
    "sys/kernel/random/entropy_avail",
    "sys/kernel/tainted",
)
# Machine-wide folders (pressure stalls; filesystems' own counters, which reading a
# shared file changes); emptied.
EMPTIED_FOLDERS = ("pressure", "fs", "sys/fs/quota")
SWAPS = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"


def meminfo(memory_mb: int) -> str:
    """The sandbox's memory as ``/proc/meminfo`` says a machine's: all of it free."""
    total = memory_mb * 1024
    rows = {
        "MemTotal": total,
        "MemFree": total,
        "MemAvailable": total,
        "Buffers": 0,
        "Cached": 0,
        "SwapCached": 0,
        "Active": 0,
        "Inactive": 0,
        "Shmem": 0,
        "SwapTotal": 0,
        "SwapFree": 0,
        "Dirty": 0,
        "Writeback": 0,
        "AnonPages": 0,
        "Mapped": 0,
        "Mlocked": 0,
        "CommitLimit": total,
        "Committed_AS": 0,
    }
    return "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in rows.items())


def stat(cpus: int) -> str:
    """``/proc/stat`` with the sandbox's CPUs and no time spent on any."""
    zeros = " 0" * 10
    lines = [f"cpu {zeros}"] + [f"cpu{index}{zeros}" for index in range(cpus)]
    lines += ["intr 0", "ctxt 0", "btime 0", "processes 1", "procs_running 1"]
    lines += ["procs_blocked 0", "softirq 0"]
    return "\n".join(lines) + "\n"


def replacements(memory_mb: int, cpus: int) -> dict[str, str]:
    """File (relative to /proc) -> what the sandbox reads there instead."""
    files = {
        "meminfo": meminfo(memory_mb),
        "stat": stat(cpus),
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "uptime": "0.00 0.00\n",
        "swaps": SWAPS,
    }
    return files | {name: "" for name in EMPTIED}


def _written(memory_mb: int, cpus: int) -> Path:
    """The replacement files on disk, once per content (shared by processes: written
    to a fresh folder, then renamed into place)."""
    files = replacements(memory_mb, cpus)
    digest = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:16]
    root = settings.data_dir / "sandbox-proc"
    folder = root / digest
    if folder.is_dir():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(dir=root, prefix=".new-"))
    for name, text in files.items():
        path = fresh / name.replace("/", "_")
        path.write_text(text)
        path.chmod(0o444)
    (fresh / "empty").mkdir(mode=0o555)
    fresh.chmod(0o755)
    try:
        fresh.rename(folder)
    except OSError:  # another process put the same folder there first
        for path in sorted(fresh.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        fresh.rmdir()
    return folder


def bwrap_arguments(memory_mb: int, proc: Path = PROC) -> list[str]:
    """Binds over the sandbox's /proc (after bubblewrap's ``--proc /proc``)."""
    cpus = len(os.sched_getaffinity(0))
    folder = _written(memory_mb, cpus)
    args: list[str] = []
    for name in replacements(memory_mb, cpus):
        target = proc / name
        if target.is_file() and not target.is_symlink() and name not in EMPTIED_FOLDERS:
            args += ["--ro-bind", str(folder / name.replace("/", "_")), f"/proc/{name}"]
    for name in EMPTIED_FOLDERS:
        if (proc / name).is_dir():
            args += ["--ro-bind", str(folder / "empty"), f"/proc/{name}"]
    return args
