"""Memory the grader may still use: the smaller of what the kernel says the machine has
available and, inside a container, a Kubernetes pod or a systemd unit with a memory
limit, what that limit leaves.

A container's /proc/meminfo is the host's: on a 64 GB node, a pod limited to 4 GB
reads 60 GB available while it is about to be OOM-killed. So every cgroup from this
process's own up to the root is read too, and a limited one counts for what it has left:
its limit less its working set (what it holds, less the file pages the kernel may drop
first: ``inactive_file``, the way the kubelet counts a pod's memory). The pool's idle
children and the held runs are sized from this (grader/running/pool.py,
grader/parking.py), before the kernel's OOM killer sizes them instead.
"""

from __future__ import annotations

from pathlib import Path

MEMINFO = Path("/proc/meminfo")
SELF_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")
UNLIMITED_V1 = 1 << 60  # cgroup v1 says "no limit" with a number near 2**63


def meminfo_available_mb(meminfo: Path = MEMINFO) -> int | None:
    """The kernel's ``MemAvailable``, or None where unknown."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0


def _own_groups(self_cgroup: Path, root: Path) -> list[tuple[int, Path]]:
    """(cgroup version, folder) of this process's memory cgroup and every ancestor."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return []
    found: list[tuple[int, Path]] = []
    for line in lines:
        _id, controllers, path = [*line.split(":", 2), "", ""][:3]
        if controllers == "":  # v2: "0::/path"
            version, base = 2, root
        elif "memory" in controllers.split(","):
            version, base = 1, root / "memory"
        else:
            continue
        folder = base / path.strip().lstrip("/")
        while True:
            found.append((version, folder))
            if folder == base or base not in folder.parents:
                break
            folder = folder.parent
    return found


def cgroup_headroom_mb(self_cgroup: Path = SELF_CGROUP, root: Path = CGROUP_ROOT) -> int | None:
    """What the tightest memory limit above this process leaves, or None where no
    cgroup above it has one (or none can be read)."""
    headroom: int | None = None
    for version, folder in _own_groups(self_cgroup, root):
        if version == 2:
            limit = _read_int(folder / "memory.max")  # "max": None, no limit
            used = _read_int(folder / "memory.current")
            reclaimable = _stat(folder / "memory.stat", "inactive_file")
        else:
            limit = _read_int(folder / "memory.limit_in_bytes")
            used = _read_int(folder / "memory.usage_in_bytes")
            reclaimable = _stat(folder / "memory.stat", "total_inactive_file")
        if limit is None or used is None or limit >= UNLIMITED_V1:
            continue
        left = max(0, limit - max(0, used - reclaimable)) // (1024 * 1024)
        headroom = left if headroom is None else min(headroom, left)
    return headroom


def available_mb(
    meminfo: Path = MEMINFO, self_cgroup: Path = SELF_CGROUP, root: Path = CGROUP_ROOT
) -> int | None:
    """The memory left to use here: the smaller of the machine's and the cgroups'; None
    where neither can be read."""
    known = [
        value
        for value in (meminfo_available_mb(meminfo), cgroup_headroom_mb(self_cgroup, root))
        if value is not None
    ]
    return min(known) if known else None
