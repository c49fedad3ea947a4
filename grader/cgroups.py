"""Per-sandbox cgroups: a process limit, a memory limit and a reliable kill.

Where the host lets us create cgroups (v2 with the pids and memory
controllers delegated, or writable v1 `pids` and `memory` hierarchies), every
sandbox gets its own group. The sandbox's first process adds *itself* before
it execs bubblewrap (`cgroup_entry_command`), so nothing it starts can escape,
and killing every process in the group ends everything the submission
started, including processes that called `setsid()`. Where neither is
available the runner falls back to rlimits (see docs/security.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
GROUP = "jaxjudge"


@dataclass(frozen=True)
class CgroupLayout:
    version: int
    pids_dir: Path  # where pids.max lives (the group itself on v2)
    memory_dir: Path

    def procs_files(self) -> list[Path]:
        files = {self.pids_dir / "cgroup.procs", self.memory_dir / "cgroup.procs"}
        return sorted(files)


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


def _v2_parent() -> Path | None:
    controllers = ROOT / "cgroup.controllers"
    if not controllers.is_file():
        return None
    own = Path(Path("/proc/self/cgroup").read_text().strip().split("::", 1)[-1].lstrip("/"))
    parent = ROOT / own / GROUP
    if not _writable_dir(parent):
        return None
    with contextlib.suppress(OSError):
        (parent / "cgroup.subtree_control").write_text("+pids +memory")
    enabled = (parent / "cgroup.subtree_control").read_text().split()
    return parent if {"pids", "memory"} <= set(enabled) else None


def detect() -> CgroupLayout | None:
    """The cgroup layout this host lets us use, or None."""
    try:
        parent = _v2_parent()
        if parent is not None:
            return CgroupLayout(2, parent, parent)
        pids, memory = ROOT / "pids" / GROUP, ROOT / "memory" / GROUP
        if (
            (ROOT / "pids" / "cgroup.procs").exists()
            and _writable_dir(pids)
            and _writable_dir(memory)
        ):
            return CgroupLayout(1, pids, memory)
    except OSError:
        return None
    return None


class SandboxCgroup:
    """One sandbox's group(s). Create, enter (from the sandbox's first process), kill, remove."""

    def __init__(self, layout: CgroupLayout, *, max_pids: int, memory_bytes: int) -> None:
        name = uuid.uuid4().hex[:12]
        self.layout = layout
        self.pids = layout.pids_dir / name
        self.memory = layout.memory_dir / name
        for path in {self.pids, self.memory}:
            path.mkdir()
        (self.pids / "pids.max").write_text(str(max_pids))
        if layout.version == 2:
            (self.memory / "memory.max").write_text(str(memory_bytes))
            with contextlib.suppress(OSError):
                (self.memory / "memory.swap.max").write_text("0")
        else:
            (self.memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            with contextlib.suppress(OSError):
                (self.memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))

    def entry_command(self) -> list[str]:
        """Prefix for argv: the shell joins the group(s), then execs the rest."""
        targets = " ".join(f"{path / 'cgroup.procs'}" for path in sorted({self.pids, self.memory}))
        script = f'for f in {targets}; do echo $$ > "$f" || exit 97; done; exec "$@"'
        return ["/bin/sh", "-c", script, "jaxjudge-cgroup-entry"]

    def oom_killed(self) -> bool:
        try:
            if self.layout.version == 2:
                events = (self.memory / "memory.events").read_text()
                return any(
                    line.split()[0] == "oom_kill" and int(line.split()[1]) > 0
                    for line in events.splitlines()
                )
            return int((self.memory / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError, IndexError):
            return False

    def pids_exhausted(self) -> bool:
        with contextlib.suppress(OSError, ValueError, IndexError):
            if self.layout.version == 2:
                events = (self.pids / "pids.events").read_text().split()
                return int(events[1]) > 0
            return int((self.pids / "pids.events").read_text().split()[1]) > 0
        return False

    def kill_all(self) -> None:
        if self.layout.version == 2:
            with contextlib.suppress(OSError):
                (self.pids / "cgroup.kill").write_text("1")
                return
        for _ in range(50):  # v1: kill until empty (forks may race the first pass)
            pids = [int(p) for p in (self.pids / "cgroup.procs").read_text().split()]
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        for path in {self.pids, self.memory}:
            with contextlib.suppress(OSError):
                path.rmdir()
