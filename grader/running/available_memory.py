"""Memory the grader may still use: the smaller of what the kernel says the machine has
available and, inside a container, a Kubernetes pod or a systemd unit with a memory
limit, what that limit leaves.

A container's /proc/meminfo is the host's: on a 64 GB node, a pod limited to 4 GB
reads 60 GB available while it is about to be OOM-killed. So every memory cgroup from
this process's own up to the top its mount shows is read too (found where the sandboxes'
groups are found, grader/running/cgroup_delegation.py: a container without a cgroup
namespace names /docker/ID but sees that group at its mount point), and a limited one
counts for what it has left:
its limit less its working set (what it holds, less the file pages the kernel may drop
first: ``inactive_file``, the way the kubelet counts a pod's memory). The pool's idle
children and the held runs are sized from this (grader/running/pool.py,
grader/parking.py), before the kernel's OOM killer sizes them instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from grader.running.cgroup_delegation import (
    CgroupFs,
    KernelFs,
    UnusableError,
    own_paths,
    parse_mountinfo,
    place,
)

MEMINFO = Path("/proc/meminfo")
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


def _read_int(fs: CgroupFs, path: Path) -> int | None:
    try:
        text = fs.read(path).strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat(fs: CgroupFs, path: Path, key: str) -> int:
    try:
        for line in fs.read(path).splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0


def _memory_groups(fs: CgroupFs) -> Iterator[tuple[int, Path]]:
    """(cgroup version, folder) of this process's memory cgroup and each ancestor this
    mount shows (a container without a cgroup namespace sees only its own subtree),
    found as grader/running/cgroup_delegation.py finds the sandboxes' parent group."""
    try:
        mounts, own = parse_mountinfo(fs.mountinfo()), own_paths(fs.own_cgroups())
    except OSError:
        return
    for mount in mounts:
        version, controller = (2, "") if mount.fstype == "cgroup2" else (1, "memory")
        if controller not in own or (version == 1 and "memory" not in mount.options):
            continue
        try:
            folder = place(mount, own[controller])
        except UnusableError:
            continue
        while True:
            yield version, folder
            if folder == mount.point or mount.point not in folder.parents:
                break
            folder = folder.parent


def cgroup_headroom_mb(fs: CgroupFs | None = None) -> int | None:
    """What the tightest memory limit above this process leaves, or None where no
    cgroup above it has one (or none can be read)."""
    fs = fs or KernelFs()
    headroom: int | None = None
    for version, folder in _memory_groups(fs):
        if version == 2:
            limit = _read_int(fs, folder / "memory.max")  # "max": None, no limit
            used = _read_int(fs, folder / "memory.current")
            reclaimable = _stat(fs, folder / "memory.stat", "inactive_file")
        else:
            limit = _read_int(fs, folder / "memory.limit_in_bytes")
            used = _read_int(fs, folder / "memory.usage_in_bytes")
            reclaimable = _stat(fs, folder / "memory.stat", "total_inactive_file")
        if limit is None or used is None or limit >= UNLIMITED_V1:
            continue
        left = max(0, limit - max(0, used - reclaimable)) // (1024 * 1024)
        headroom = left if headroom is None else min(headroom, left)
    return headroom


def available_mb(meminfo: Path = MEMINFO, fs: CgroupFs | None = None) -> int | None:
    """The memory left to use here: the smaller of the machine's and the cgroups'; None
    where neither can be read."""
    known = [
        value
        for value in (meminfo_available_mb(meminfo), cgroup_headroom_mb(fs))
        if value is not None
    ]
    return min(known) if known else None
