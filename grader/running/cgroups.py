"""Per-sandbox cgroups: one memory budget and one process count for everything a
submission starts, and a reliable kill.

Where the host lets us create cgroups, every sandbox gets its own group,
nested under the cgroup this process already lives in (so a container's or a
service's own limits still apply above it):

    <own cgroup>/jaxjudge/<pid>-<start time>/<sandbox>

The middle level belongs to one grading process, so a restarted worker can
remove what a dead one left behind without touching a live one's groups.
Finding <own cgroup>, and making it usable where this process may (enabling the
controllers from an ancestor down, moving this service's processes into a leaf of
their own), is grader/running/cgroup_delegation.py's: ``detect()`` says what it did
and, where nothing is usable, why and what to configure.

The sandbox's first process adds *itself* before it execs bubblewrap
(``entry_command``), so nothing it starts can escape; killing the group ends
everything the submission started, including processes that called
``setsid()``. Memory charged to the group includes tmpfs pages the sandbox
writes (its /tmp and /dev/shm). Where no layout is usable, grader/running/limits.py
says what is enforced instead.
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

from grader.running.cgroup_delegation import (
    OPTIONAL,
    REQUIRED,
    SERVICE_LEAF,
    CgroupFs,
    KernelFs,
    UnusableError,
    enable_below,
    explain,
    find,
)

log = logging.getLogger("jaxjudge.cgroups")

GROUP = "jaxjudge"


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


@dataclass(frozen=True)
class Detection:
    """What ``detect`` found: the layout (None: unusable), what it changed on the host
    to get there, and why nothing is usable where that is so."""

    layout: CgroupLayout | None
    steps: tuple[str, ...] = ()
    problem: str | None = None


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


def _make(fs: CgroupFs, group: Path, version: int, optional: tuple[str, ...]) -> Path:
    """``group`` created; on v2 the required controllers, and those of ``optional`` the
    host allows, enabled below it (it holds no process)."""
    try:
        fs.mkdir(group)
    except OSError as error:
        raise UnusableError(explain(error, "create", group)) from None
    if version == 2:
        enable_below(fs, group, REQUIRED)
        for controller in optional:
            with contextlib.suppress(UnusableError):
                enable_below(fs, group, (controller,))
    return group


def _own_group(fs: CgroupFs, group: Path, version: int, optional: tuple[str, ...]) -> Path:
    """This process's group for its sandboxes' groups, below ``group``, stale ones gone."""
    base = _make(fs, group / GROUP, version, optional)
    _remove_stale(base)
    return _make(fs, base / (process_tag(os.getpid()) or str(os.getpid())), version, optional)


def detect(fs: CgroupFs | None = None) -> Detection:
    """The layout this process may use (created now, stale groups removed), or why none."""
    fs = fs or KernelFs()
    try:
        found = find(fs)
        optional = tuple(c for c in OPTIONAL if c in found.groups)
        made: dict[Path, Path] = {}  # v2 (and co-mounted v1 controllers) share one group
        dirs: dict[str, Path] = {}
        for controller, group in found.groups.items():
            try:
                if group not in made:
                    made[group] = _own_group(fs, group, found.version, optional)
            except (UnusableError, OSError):
                if controller in REQUIRED:
                    raise
                continue  # CPU shares and CPU time per sandbox are niceties
            dirs[controller] = made[group]
        if found.version == 2 and "cpu" in dirs:
            enabled = set(fs.read(dirs["cpu"] / "cgroup.subtree_control").split())
            if "cpu" not in enabled:
                del dirs["cpu"]
        layout = CgroupLayout(
            found.version,
            dirs["pids"],
            dirs["memory"],
            moved_service=found.moved_service,
            cpu_dir=dirs.get("cpu"),
            cpuacct_dir=dirs.get("cpuacct"),
        )
        return Detection(layout, tuple(found.steps))
    except UnusableError as error:
        return Detection(None, problem=str(error))
    except OSError as error:
        where = Path(error.filename) if error.filename else Path("/sys/fs/cgroup")
        return Detection(None, problem=explain(error, "use", where))


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
