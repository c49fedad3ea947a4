"""Memory left to use, read as a container would show it: the machine's MemAvailable,
and every memory-limited cgroup from this process's own up to the top its mount shows
(v1 and v2 layouts written as the kernel lays them out, /proc/self/cgroup and
/proc/self/mountinfo as a host, a pod and a container without a cgroup namespace show
them)."""

from __future__ import annotations

from pathlib import Path

from grader.running.available_memory import (
    available_mb,
    cgroup_headroom_mb,
    meminfo_available_mb,
)
from grader.running.cgroup_delegation import KernelFs

MB = 1024 * 1024


class SeenFs(KernelFs):
    """The real files under a temporary folder, with this process's view of them."""

    def __init__(self, own_cgroups: str, mountinfo: str) -> None:
        self._own, self._mounts = own_cgroups, mountinfo

    def own_cgroups(self) -> str:
        return self._own

    def mountinfo(self) -> str:
        return self._mounts


def _v2_mount(point: Path, root: str = "/") -> str:
    return f"30 25 0:26 {root} {point} rw,nosuid - cgroup2 cgroup2 rw\n"


def _v1_memory_mount(point: Path, root: str = "/") -> str:
    return f"36 30 0:31 {root} {point} rw,nosuid - cgroup cgroup rw,memory\n"


def _meminfo(tmp_path: Path, available_kb: int) -> Path:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(f"MemTotal: 67108864 kB\nMemAvailable:    {available_kb} kB\n")
    return meminfo


def _v2_group(folder: Path, *, limit: str, current: int, inactive_file: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memory.max").write_text(f"{limit}\n")
    (folder / "memory.current").write_text(f"{current}\n")
    (folder / "memory.stat").write_text(f"anon {current}\nfile 0\ninactive_file {inactive_file}\n")


def test_meminfo_is_read_in_megabytes(tmp_path: Path) -> None:
    assert meminfo_available_mb(_meminfo(tmp_path, 2097152)) == 2048
    assert meminfo_available_mb(tmp_path / "missing") is None


def test_a_pods_limit_counts_for_what_it_leaves(tmp_path: Path) -> None:
    """A 4 GB pod on a 64 GB node holding 3 GB, 512 MB of it droppable file pages: 1.5 GB
    left, though the node's MemAvailable says 60 GB."""
    root = tmp_path / "cgroup"
    pod = root / "kubepods.slice" / "pod1"
    _v2_group(root / "kubepods.slice", limit="max", current=40 * 1024 * MB, inactive_file=0)
    _v2_group(pod, limit=str(4096 * MB), current=3072 * MB, inactive_file=512 * MB)
    _v2_group(pod / "app", limit="max", current=3072 * MB, inactive_file=512 * MB)
    fs = SeenFs("0::/kubepods.slice/pod1/app\n", _v2_mount(root))
    meminfo = _meminfo(tmp_path, 60 * 1024 * 1024)
    assert cgroup_headroom_mb(fs) == 1536
    assert available_mb(meminfo, fs) == 1536


def test_the_tightest_limit_above_wins_and_an_overfull_group_has_nothing_left(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cgroup"
    outer, inner = root / "outer", root / "outer" / "inner"
    _v2_group(outer, limit=str(2048 * MB), current=2100 * MB, inactive_file=0)
    _v2_group(inner, limit=str(8192 * MB), current=1000 * MB, inactive_file=0)
    assert cgroup_headroom_mb(SeenFs("0::/outer/inner\n", _v2_mount(root))) == 0


def test_a_v1_container_without_a_cgroup_namespace_reads_its_own_group(tmp_path: Path) -> None:
    """Docker on cgroup v1: /proc/self/cgroup names /docker/abc, and the memory mount
    shows that group itself at its mount point (the host's levels above are not there)."""
    point = tmp_path / "memory"
    point.mkdir()
    (point / "memory.limit_in_bytes").write_text(f"{1024 * MB}\n")
    (point / "memory.usage_in_bytes").write_text(f"{300 * MB}\n")
    (point / "memory.stat").write_text(f"cache 0\ntotal_inactive_file {100 * MB}\n")
    fs = SeenFs(
        "5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n",
        _v1_memory_mount(point, root="/docker/abc"),
    )
    assert cgroup_headroom_mb(fs) == 824


def test_cgroup_v1s_no_limit_value_is_no_limit(tmp_path: Path) -> None:
    point = tmp_path / "memory"
    group = point / "system.slice"
    group.mkdir(parents=True)
    for folder in (point, group):
        (folder / "memory.limit_in_bytes").write_text("9223372036854771712\n")
        (folder / "memory.usage_in_bytes").write_text(f"{300 * MB}\n")
    fs = SeenFs("4:memory:/system.slice\n", _v1_memory_mount(point))
    assert cgroup_headroom_mb(fs) is None


def test_no_limit_anywhere_leaves_the_machines_figure(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _v2_group(root / "service", limit="max", current=100 * MB, inactive_file=0)
    fs = SeenFs("0::/service\n", _v2_mount(root))
    meminfo = _meminfo(tmp_path, 3 * 1024 * 1024)
    assert cgroup_headroom_mb(fs) is None
    assert available_mb(meminfo, fs) == 3072
    assert available_mb(tmp_path / "none", SeenFs("", "")) is None
