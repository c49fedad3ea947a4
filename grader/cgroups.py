"""Per-sandbox cgroups: one memory budget and one process count for everything a
submission starts, and a reliable kill.

Where the host lets us create cgroups, every sandbox gets its own group,
nested under the cgroup this process already lives in (so a container's or a
service's own limits still apply above it):

    <own cgroup>/jaxjudge/<pid>-<start time>/<sandbox>

The middle level belongs to one grading process, so a restarted worker can
remove what a dead one left behind without touching a live one's groups.

- cgroup v2: the pids and memory controllers must be enabled in our own
  cgroup's ``cgroup.subtree_control``. The kernel refuses that while our own
  cgroup holds processes (the "no internal processes" rule), which is how a
  service usually starts. Then the processes of our cgroup move into a leaf of
  their own, ``jaxjudge-service``, and the controllers are enabled above it:
  the delegation pattern systemd documents for services that manage cgroups.
- cgroup v1: writable ``memory`` and ``pids`` hierarchies, nested the same way.

The sandbox's first process adds *itself* before it execs bubblewrap
(``entry_command``), so nothing it starts can escape; killing the group ends
everything the submission started, including processes that called
``setsid()``. Memory charged to the group includes tmpfs pages the sandbox
writes (its /tmp and /dev/shm). Where no layout is usable, ``detect()``
returns None and grader/limits.py says what is enforced instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("jaxjudge.cgroups")

ROOT = Path("/sys/fs/cgroup")
GROUP = "jaxjudge"
SERVICE_LEAF = "jaxjudge-service"
CONTROLLERS = ("memory", "pids")


@dataclass(frozen=True)
class CgroupLayout:
    """Where this process creates its sandboxes' groups."""

    version: int
    pids_dir: Path  # where pids.max lives (the group itself on v2)
    memory_dir: Path
    moved_service: bool = False  # v2: our processes were moved into a leaf
    cpu_dir: Path | None = None  # where CPU shares are set, where the host allows it

    def describe(self) -> str:
        where = self.memory_dir if self.version == 2 else f"{self.memory_dir}, {self.pids_dir}"
        moved = (
            f" (this service's processes moved into {SERVICE_LEAF})" if self.moved_service else ""
        )
        shares = ", CPU shares (waiting children yield to gradings)" if self.cpu_dir else ""
        return f"cgroup v{self.version} under {where}{moved}{shares}"


def process_tag(pid: int) -> str | None:
    """``<pid>-<start time>``: names a process for as long as it lives, despite pid reuse."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return f"{pid}-{fields[19]}"  # field 22 of stat: start time in clock ticks


def _own_path(controller: str | None) -> Path:
    """Our cgroup's path in a hierarchy: v1 by controller name, v2 with None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _hierarchy, names, path = line.split(":", 2)
        if (controller is None and names == "") or (
            controller is not None and controller in names.split(",")
        ):
            return Path(path.lstrip("/"))
    raise OSError(f"no {controller or 'v2'} entry in /proc/self/cgroup")


def _enable(group: Path) -> None:
    (group / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))


def _enabled(group: Path) -> bool:
    return set(CONTROLLERS) <= set((group / "cgroup.subtree_control").read_text().split())


def _move_processes_into_leaf(group: Path) -> None:
    leaf = group / SERVICE_LEAF
    leaf.mkdir(exist_ok=True)
    for _ in range(10):  # processes may fork while we move them
        pids = (group / "cgroup.procs").read_text().split()
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, OSError):
                (leaf / "cgroup.procs").write_text(pid)


def _v2_layout() -> CgroupLayout | None:
    if not (ROOT / "cgroup.controllers").is_file():
        return None
    own = ROOT / _own_path(None)
    if not set(CONTROLLERS) <= set((own / "cgroup.controllers").read_text().split()):
        return None
    moved = False
    if not _enabled(own):
        try:
            _enable(own)
        except OSError:  # EBUSY: our cgroup holds processes (no internal processes rule)
            _move_processes_into_leaf(own)
            _enable(own)
            moved = True
    base = own / GROUP
    base.mkdir(exist_ok=True)
    if not _enabled(base):
        _enable(base)
    cpu = _enable_cpu(own) and _enable_cpu(base)
    return CgroupLayout(2, base, base, moved_service=moved, cpu_dir=base if cpu else None)


def _enable_cpu(group: Path) -> bool:
    """v2's cpu controller for the groups below ``group``, if the host delegates it."""
    if "cpu" in (group / "cgroup.subtree_control").read_text().split():
        return True
    if "cpu" not in (group / "cgroup.controllers").read_text().split():
        return False
    try:
        (group / "cgroup.subtree_control").write_text("+cpu")
    except OSError:
        return False
    return True


def _v1_layout() -> CgroupLayout | None:
    dirs = []
    for controller in CONTROLLERS:
        hierarchy = ROOT / controller
        if not (hierarchy / "cgroup.procs").is_file():
            return None
        base = hierarchy / _own_path(controller) / GROUP
        base.mkdir(exist_ok=True)
        if not os.access(base, os.W_OK):
            return None
        dirs.append(base)
    memory, pids = dirs
    cpu = ROOT / "cpu" / _own_path("cpu") / GROUP
    with contextlib.suppress(OSError):
        cpu.mkdir(exist_ok=True)
    usable = (ROOT / "cpu" / "cgroup.procs").is_file() and os.access(cpu, os.W_OK)
    return CgroupLayout(1, pids, memory, cpu_dir=cpu if usable else None)


def _remove_stale(base: Path) -> None:
    """Remove the groups of grading processes that are gone (and pre-nesting leftovers)."""
    for child in base.iterdir():
        if not child.is_dir() or child.name == SERVICE_LEAF:
            continue
        pid = child.name.split("-", 1)[0]
        if pid.isdigit() and process_tag(int(pid)) == child.name:
            continue  # a live grading process's groups
        for sandbox in [p for p in child.iterdir() if p.is_dir()]:
            _kill_and_remove(sandbox)
        _kill_and_remove(child)


def _kill_and_remove(group: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    with contextlib.suppress(OSError):
        group.rmdir()


def _own_subgroup(base: Path, version: int) -> Path:
    tag = process_tag(os.getpid()) or str(os.getpid())
    group = base / tag
    group.mkdir(exist_ok=True)
    if version == 2 and not _enabled(group):
        _enable(group)
    return group


def detect() -> CgroupLayout | None:
    """The layout this process may use (created now, stale groups removed), or None."""
    try:
        layout = _v2_layout() or _v1_layout()
        if layout is None:
            return None
        for base in {layout.pids_dir, layout.memory_dir, layout.cpu_dir}:
            if base is not None:
                _remove_stale(base)
        return CgroupLayout(
            layout.version,
            _own_subgroup(layout.pids_dir, layout.version),
            _own_subgroup(layout.memory_dir, layout.version),
            layout.moved_service,
            _own_subgroup(layout.cpu_dir, layout.version) if layout.cpu_dir else None,
        )
    except OSError as error:
        log.warning("no usable cgroup for sandboxes: %s", error)
        return None


class SandboxCgroup:
    """One sandbox's group(s). Create, enter (from the sandbox's first process),
    set the job's memory limit, kill, remove."""

    def __init__(self, layout: CgroupLayout, *, max_pids: int, memory_bytes: int) -> None:
        name = uuid.uuid4().hex[:12]
        self.layout = layout
        self.pids = layout.pids_dir / name
        self.memory = layout.memory_dir / name
        self.cpu = layout.cpu_dir / name if layout.cpu_dir else None
        for path in self._groups():
            path.mkdir()
        self.set_busy(False)
        (self.pids / "pids.max").write_text(str(max_pids))
        if layout.version == 2:
            with contextlib.suppress(OSError):
                (self.memory / "memory.swap.max").write_text("0")
        self._limit = 1 << 62  # unlimited until set
        self.set_memory_limit(memory_bytes)

    def _groups(self) -> list[Path]:
        return sorted({self.pids, self.memory} | ({self.cpu} if self.cpu else set()))

    def set_busy(self, busy: bool) -> None:
        """CPU shares: a waiting child (starting, importing, warming up) yields the CPU to
        gradings under way; a child with a job gets a full share. Only where the host
        delegates the cpu controller; elsewhere every child competes equally."""
        if self.cpu is None:
            return
        with contextlib.suppress(OSError):
            if self.layout.version == 2:
                (self.cpu / "cpu.weight").write_text("100" if busy else "1")
            else:
                (self.cpu / "cpu.shares").write_text("1024" if busy else "16")

    def set_memory_limit(self, memory_bytes: int) -> None:
        """Everything in the sandbox together, tmpfs pages included; no swap."""
        if self.layout.version == 2:
            (self.memory / "memory.max").write_text(str(memory_bytes))
        else:
            limit = self.memory / "memory.limit_in_bytes"
            memsw = self.memory / "memory.memsw.limit_in_bytes"  # only where swap is accounted
            # v1 wants limit <= memsw at every step, so the order of the writes depends
            # on the direction.
            for path in [memsw, limit] if memory_bytes > self._limit else [limit, memsw]:
                if path is limit:
                    limit.write_text(str(memory_bytes))
                elif memsw.exists():
                    with contextlib.suppress(OSError):
                        memsw.write_text(str(memory_bytes))
        self._limit = memory_bytes

    def entry_command(self) -> list[str]:
        """Prefix for argv: the shell joins the group(s), then execs the rest."""
        targets = " ".join(f"{path / 'cgroup.procs'}" for path in self._groups())
        script = f'for f in {targets}; do echo $$ > "$f" || exit 97; done; exec "$@"'
        return ["/bin/sh", "-c", script, "jaxjudge-cgroup-entry"]

    def oom_killed(self) -> bool:
        try:
            if self.layout.version == 2:
                events = (self.memory / "memory.events").read_text()
            else:
                events = (self.memory / "memory.oom_control").read_text()
            counts = dict(line.split() for line in events.splitlines() if len(line.split()) == 2)
            if "oom_kill" in counts:
                return int(counts["oom_kill"]) > 0
            return int((self.memory / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def kill_all(self) -> None:
        if self.layout.version == 2:
            with contextlib.suppress(OSError):
                (self.pids / "cgroup.kill").write_text("1")
                return
        for _ in range(50):  # v1: kill until empty (forks may race the first pass)
            try:
                pids = [int(p) for p in (self.pids / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        """Remove the group(s); a killed process may take a moment to leave them."""
        for path in self._groups():
            for _ in range(20):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
