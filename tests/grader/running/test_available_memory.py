"""Memory left to use, read as a container would show it: the machine's MemAvailable,
and every memory-limited cgroup from this process's own up to the root (v1 and v2
layouts written as the kernel lays them out)."""

from __future__ import annotations

from pathlib import Path

from grader.running.available_memory import (
    available_mb,
    cgroup_headroom_mb,
    meminfo_available_mb,
)

MB = 1024 * 1024


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
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text("0::/kubepods.slice/pod1/app\n")
    meminfo = _meminfo(tmp_path, 60 * 1024 * 1024)
    assert cgroup_headroom_mb(self_cgroup, root) == 1536
    assert available_mb(meminfo, self_cgroup, root) == 1536


def test_the_tightest_limit_above_wins_and_an_overfull_group_has_nothing_left(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cgroup"
    outer, inner = root / "outer", root / "outer" / "inner"
    _v2_group(outer, limit=str(2048 * MB), current=2100 * MB, inactive_file=0)
    _v2_group(inner, limit=str(8192 * MB), current=1000 * MB, inactive_file=0)
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text("0::/outer/inner\n")
    assert cgroup_headroom_mb(self_cgroup, root) == 0


def test_cgroup_v1_memory_controller_and_its_no_limit_value(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    group = root / "memory" / "docker" / "abc"
    group.mkdir(parents=True)
    (group / "memory.limit_in_bytes").write_text(f"{1024 * MB}\n")
    (group / "memory.usage_in_bytes").write_text(f"{300 * MB}\n")
    (group / "memory.stat").write_text(f"cache 0\ntotal_inactive_file {100 * MB}\n")
    (root / "memory" / "docker" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (root / "memory" / "docker" / "memory.usage_in_bytes").write_text(f"{300 * MB}\n")
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text("5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n")
    assert cgroup_headroom_mb(self_cgroup, root) == 824


def test_no_limit_anywhere_leaves_the_machines_figure(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _v2_group(root / "service", limit="max", current=100 * MB, inactive_file=0)
    self_cgroup = tmp_path / "self-cgroup"
    self_cgroup.write_text("0::/service\n")
    meminfo = _meminfo(tmp_path, 3 * 1024 * 1024)
    assert cgroup_headroom_mb(self_cgroup, root) is None
    assert available_mb(meminfo, self_cgroup, root) == 3072
    assert available_mb(tmp_path / "none", tmp_path / "none", root) is None
