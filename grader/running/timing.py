"""What a submission's time limits measure: its own CPU time, not the machine's load.

A wall-clock limit measures the machine as much as the submission: under a class's
load before a deadline, a correct reference passed its 30 s limit. So a job has two
limits (grader/running/supervise.py enforces both from outside):

- **CPU time**, every process and thread of the sandbox together, counted from the
  job's delivery: the sandbox's cgroup (``cpuacct.usage`` on v1, ``cpu.stat`` on v2),
  or, where there is none, the process tree's ``utime + stime`` from /proc (live
  processes, plus what each has reaped of its children). A busy machine makes a
  submission slower, not more expensive, so this limit is the same under load.
- **Wall clock**, a generous backstop (``BACKSTOP_FACTOR`` times the CPU budget, and
  never less than the problem's ``wall_seconds``) for code that does not compute:
  sleeping, blocked, or starved of CPU.

A time-out decided while the machine was overloaded is not final: the sandbox's
threads are measured for how long they waited on a run queue against how long they
ran (``/proc/<tid>/schedstat``), and a run that mostly waited, or any time-out while
the load average exceeds the cores, is run once more on a fresh child with a large
CPU share and a longer wall clock, the same CPU budget (grader/running/supervise.py
``run_retrying``), whose verdict stands.

The budget itself is calibrated per machine (grader/calibration.py): a multiple of
the reference's CPU time measured here, never below the problem's floor.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

BACKSTOP_FACTOR = 3.0


@dataclass(frozen=True)
class TimeLimits:
    """One job's limits: CPU seconds (None: the wall clock alone, for trusted runs) and
    the wall-clock backstop."""

    cpu_seconds: float | None
    wall_seconds: float

    @classmethod
    def for_budget(cls, cpu_seconds: float, wall_floor: float) -> TimeLimits:
        return cls(cpu_seconds, max(wall_floor, BACKSTOP_FACTOR * cpu_seconds))


@dataclass(frozen=True)
class SchedTimes:
    """Nanoseconds the measured threads ran on a CPU and waited on a run queue."""

    ran: int = 0
    waited: int = 0

    def since(self, earlier: SchedTimes) -> SchedTimes:
        return SchedTimes(max(0, self.ran - earlier.ran), max(0, self.waited - earlier.waited))

    @property
    def mostly_waiting(self) -> bool:
        """Whether these threads spent more time waiting for a CPU than running."""
        return self.waited > self.ran


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def process_tree(root: int) -> list[int]:
    """``root`` and every live descendant (what a sandbox is where no cgroup holds it)."""
    children = _children_map()
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += children.get(pid, [])
    return found


TICKS = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root: int) -> float:
    """CPU time of a process tree: each live process's own time and what it reaped of
    its children (``utime stime cutime cstime``), so nothing is counted twice."""
    total = 0
    for pid in process_tree(root):
        fields = _stat_fields(pid)
        if fields is not None:
            total += sum(int(value) for value in fields[11:15])
    return total / TICKS


def threads_of(pids: Iterable[int]) -> list[int]:
    threads: list[int] = []
    for pid in pids:
        with contextlib.suppress(OSError):
            threads += [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    return threads


def sched_times(threads: Iterable[int]) -> SchedTimes:
    """Run and run-queue wait time of these threads so far (0 where the kernel keeps no
    scheduler statistics)."""
    ran = waited = 0
    for tid in threads:
        try:
            fields = Path(f"/proc/{tid}/schedstat").read_text().split()
        except OSError:
            continue
        ran, waited = ran + int(fields[0]), waited + int(fields[1])
    return SchedTimes(ran, waited)


def machine_overloaded() -> bool:
    """More runnable work than cores, on the last minute's average."""
    try:
        return os.getloadavg()[0] > (os.cpu_count() or 1)
    except OSError:
        return False


@dataclass
class SandboxClock:
    """A started sandbox's CPU time and scheduling, measured from outside.

    ``cpu_seconds`` and ``threads`` read the sandbox's cgroup where it has one
    (grader/running/cgroups.py), else the process tree under ``root``."""

    root: int
    cgroup_cpu: Callable[[], float | None] | None = None
    cgroup_threads: Callable[[], list[int]] | None = None

    def cpu_seconds(self) -> float:
        if self.cgroup_cpu is not None:
            measured = self.cgroup_cpu()
            if measured is not None:
                return measured
        return tree_cpu_seconds(self.root)

    def sched(self) -> SchedTimes:
        if self.cgroup_threads is not None:
            return sched_times(self.cgroup_threads())
        return sched_times(threads_of(process_tree(self.root)))
