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
returns None and grader/running/limits.py says what is enforced instead.
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
    cpuacct_dir: Path | None = None  # v1: where CPU time is counted (v2: memory_dir's cpu.stat)

    def describe(self) -> str:
        where = self.memory_dir if self.version == 2 else f"{self.memory_dir}, {self.pids_dir}"
        moved = (
            f" (this service's processes moved into {SERVICE_LEAF})" if self.moved_service else ""
        )
        shares = ", CPU shares (waiting children yield to gradings)" if self.cpu_dir else ""
        counted = self.version == 2 or self.cpuacct_dir is not None
        cpu = ", CPU time per sandbox" if counted else ", CPU time from /proc (no cpuacct)"
        return f"cgroup v{self.version} under {where}{moved}{shares}{cpu}"


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
    return CgroupLayout(
        1, pids, memory, cpu_dir=_v1_optional("cpu"), cpuacct_dir=_v1_optional("cpuacct")
    )


def _v1_optional(controller: str) -> Path | None:
    """Our group in a v1 hierarchy we can do without (CPU shares, CPU time), if usable.
    Resolved: ``cpu`` and ``cpuacct`` are often one hierarchy under two names."""
    try:
        base = (ROOT / controller / _own_path(controller) / GROUP).resolve()
        base.mkdir(exist_ok=True)
    except OSError:
        return None
    usable = (ROOT / controller / "cgroup.procs").is_file() and os.access(base, os.W_OK)
    return base if usable else None


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
        for base in {layout.pids_dir, layout.memory_dir, layout.cpu_dir, layout.cpuacct_dir}:
            if base is not None:
                _remove_stale(base)
        own = {
            base: _own_subgroup(base, layout.version)
            for base in {layout.pids_dir, layout.memory_dir, layout.cpu_dir, layout.cpuacct_dir}
            if base is not None
        }
        return CgroupLayout(
            layout.version,
            own[layout.pids_dir],
            own[layout.memory_dir],
            layout.moved_service,
            own[layout.cpu_dir] if layout.cpu_dir else None,
            own[layout.cpuacct_dir] if layout.cpuacct_dir else None,
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
        self.cpuacct = layout.cpuacct_dir / name if layout.cpuacct_dir else None
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
        optional = {path for path in (self.cpu, self.cpuacct) if path is not None}
        return sorted({self.pids, self.memory} | optional)

    def set_busy(self, busy: bool, *, boosted: bool = False) -> None:
        """CPU shares: a waiting child (starting, importing, warming up) yields the CPU to
        gradings under way; a child with a job gets a full share, and one confirming a
        time-out on a busy machine (grader/running/timing.py) many. Only where the host delegates
        the cpu controller; elsewhere every child competes equally."""
        if self.cpu is None:
            return
        weights = {"idle": ("1", "16"), "busy": ("100", "1024"), "boosted": ("10000", "262144")}
        v2, v1 = weights["boosted" if boosted else "busy" if busy else "idle"]
        with contextlib.suppress(OSError):
            if self.layout.version == 2:
                (self.cpu / "cpu.weight").write_text(v2)
            else:
                (self.cpu / "cpu.shares").write_text(v1)

    def cpu_seconds(self) -> float | None:
        """CPU time of everything in the sandbox so far (None where it is not counted)."""
        try:
            if self.layout.version == 2:
                for line in (self.memory / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
                return None
            if self.cpuacct is None:
                return None
            return int((self.cpuacct / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return None

    def threads(self) -> list[int]:
        """Every thread in the sandbox now."""
        name = "cgroup.threads" if self.layout.version == 2 else "tasks"
        try:
            return [int(tid) for tid in (self.pids / name).read_text().split()]
        except (OSError, ValueError):
            return []

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
