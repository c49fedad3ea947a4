"""Where sandboxes' cgroups go on the hosts people run jaxjudge on
(grader/running/cgroup_delegation.py, grader/running/cgroups.py ``detect``), each
played on an emulated cgroup v2 filesystem (tests/grader/running/fake_cgroupfs.py):
this machine's own is v1, whose real layout the sandbox tests use."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from grader.config import settings
from grader.running.cgroup_delegation import (
    SERVICE_LEAF,
    UnusableError,
    explain,
    own_paths,
    parse_mountinfo,
    place,
)
from grader.running.cgroups import GROUP, detect, process_tag
from grader.running.limits import SandboxLimits, UnboundedGpuError, refuse_unbounded_gpu
from tests.grader.running.fake_cgroupfs import FakeCgroupFs

ME = os.getpid()
NEIGHBOUR = 1  # another process in the same group (a container's init, a shell)


def _own_group(layout_dir: Path) -> Path:
    """The group a layout's sandboxes are made under: <group>/jaxjudge/<pid-start>."""
    assert layout_dir.name == process_tag(ME)
    assert layout_dir.parent.name == GROUP
    return layout_dir.parent.parent


def test_a_delegated_service_moves_into_a_leaf_and_enables_its_controllers(
    tmp_path: Path,
) -> None:
    """systemd with Delegate=yes: the controllers are offered, the group holds the service."""
    fs = FakeCgroupFs(tmp_path / "cgroup")
    fs.group("/system.slice", enabled="cpu memory pids")
    service = fs.group("/system.slice/jaxjudge.service", procs=(ME, NEIGHBOUR))
    found = detect(fs)
    assert found.layout is not None, found.problem
    assert _own_group(found.layout.memory_dir) == service
    assert found.layout.pids_dir == found.layout.memory_dir == found.layout.cpu_dir
    assert found.layout.moved_service
    assert fs.where(ME) == fs.where(NEIGHBOUR) == service / SERVICE_LEAF
    assert {"memory", "pids", "cpu"} <= set(
        fs.read(found.layout.memory_dir / "cgroup.controllers").split()
    )
    assert any("moved this service's processes" in step for step in found.steps)


def test_a_group_with_no_controller_delegated_gets_them_from_its_parent(tmp_path: Path) -> None:
    """A VM agent's group (0::/process_api/<id>), as root: the parent offers the controllers
    but enabled none for its children. They are enabled there, and the start-up line
    says so, step by step."""
    fs = FakeCgroupFs(tmp_path / "cgroup")
    fs.group("/", enabled="memory pids cpu")
    own = fs.group("/process_api/875f6f", procs=(ME,))
    assert fs.read(own / "cgroup.controllers") == ""
    found = detect(fs)
    assert found.layout is not None, found.problem
    assert _own_group(found.layout.memory_dir) == own
    assert found.layout.cpu_dir is not None
    steps = "\n".join(found.steps)
    for controller in ("memory", "pids", "cpu"):
        assert f"enabled {controller} for the groups below {own.parent}" in steps
    assert f"moved this service's processes into {own / SERVICE_LEAF}" in steps


def test_controllers_are_enabled_from_the_nearest_ancestor_that_has_them(tmp_path: Path) -> None:
    fs = FakeCgroupFs(tmp_path / "cgroup")
    fs.group("/", enabled="memory pids")
    fs.group("/a", enabled="memory")  # pids stops here
    own = fs.group("/a/b/c", procs=(ME,))
    found = detect(fs)
    assert found.layout is not None, found.problem
    assert f"enabled pids for the groups below {own.parent.parent}" in found.steps
    assert f"enabled pids for the groups below {own.parent}" in found.steps
    assert f"enabled memory for the groups below {own.parent.parent}" not in found.steps
    assert f"enabled memory for the groups below {own.parent}" in found.steps


def test_an_ancestor_that_holds_processes_is_named_with_the_reason(tmp_path: Path) -> None:
    fs = FakeCgroupFs(tmp_path / "cgroup")
    fs.group("/", enabled="memory pids")
    parent = fs.group("/agent", procs=(NEIGHBOUR,))
    fs.group("/agent/session", procs=(ME,))
    found = detect(fs)
    assert found.layout is None
    assert found.problem is not None
    assert str(parent) in found.problem
    assert "holds processes of its own" in found.problem
    assert "docs/deployment.md" in found.problem
    assert fs.where(NEIGHBOUR) == parent  # nothing of someone else's was moved


def test_a_read_only_cgroup_mount_says_so(tmp_path: Path) -> None:
    """A container's or pod's cgroup (a namespace of its own, mounted read-only)."""
    where = "/kubepods/pod1/ctr"
    fs = FakeCgroupFs(tmp_path / "cgroup", namespace_root=where, mount_root=where)
    for ancestor in ("/", "/kubepods", "/kubepods/pod1"):
        fs.group(ancestor, enabled="cpu memory pids")
    fs.group(where, procs=(ME,))
    fs.read_only = True
    found = detect(fs)
    assert found.layout is None
    assert found.problem is not None and "mounted read-only" in found.problem


def test_a_container_with_a_writable_cgroup_namespace_is_usable(tmp_path: Path) -> None:
    """podman --systemd=always on cgroup v2: the container's own group is the top of what
    it sees ("0::/"), writable; its processes move into a leaf."""
    fs = FakeCgroupFs(tmp_path / "cgroup", namespace_root="/machine/ctr", mount_root="/machine/ctr")
    fs.group("/", enabled="memory pids cpu")
    fs.group("/machine", enabled="memory pids cpu")
    container = fs.group("/machine/ctr", procs=(NEIGHBOUR, ME))
    assert fs.own_cgroups() == "0::/\n"
    found = detect(fs)
    assert found.layout is not None, found.problem
    assert _own_group(found.layout.memory_dir) == container
    assert fs.where(NEIGHBOUR) == container / SERVICE_LEAF


def test_without_the_cpu_controller_sandboxes_still_get_memory_and_pids(tmp_path: Path) -> None:
    fs = FakeCgroupFs(tmp_path / "cgroup", offered=("memory", "pids"))
    fs.group("/", enabled="memory pids")
    fs.group("/svc", procs=(ME,))
    found = detect(fs)
    assert found.layout is not None, found.problem
    assert found.layout.cpu_dir is None
    assert "CPU shares" not in found.layout.describe()


def test_a_parent_this_user_may_not_write_is_named(tmp_path: Path) -> None:
    fs = FakeCgroupFs(tmp_path / "cgroup")
    fs.group("/", enabled="memory pids")
    parent = fs.group("/user.slice")
    fs.group("/user.slice/session-1.scope", procs=(ME,))
    fs.refuse.add(parent)
    found = detect(fs)
    assert found.problem is not None
    assert f"could not enable memory in {parent}" in found.problem
    assert "not delegated to this user" in found.problem


def test_a_bind_mounted_subtree_is_placed_through_mountinfo() -> None:
    """Docker without a cgroup namespace: /proc/self/cgroup says /docker/abc, and the
    mount at /sys/fs/cgroup shows exactly that subtree."""
    line = "35 24 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    (mount,) = parse_mountinfo(line)
    assert mount.root == PurePosixPath("/docker/abc")
    assert place(mount, own_paths("0::/docker/abc\n")[""]) == Path("/sys/fs/cgroup")
    assert place(mount, PurePosixPath("/docker/abc/x")) == Path("/sys/fs/cgroup/x")
    with pytest.raises(UnusableError, match="outside the part of the hierarchy"):
        place(mount, PurePosixPath("/elsewhere"))


def test_v1_mounts_name_their_controllers() -> None:
    text = (
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
        "21 1 0:19 / /my\\040mount rw - ext4 /dev/vda rw\n"
    )
    mounts = parse_mountinfo(text)
    assert [m.fstype for m in mounts] == ["cgroup", "cgroup", "cgroup2"]
    assert {"cpu", "cpuacct"} <= mounts[1].options
    paths = own_paths("4:memory:/process_api/875f\n2:cpu,cpuacct:/\n0::/\n")
    assert paths["memory"] == PurePosixPath("/process_api/875f")
    assert paths["cpuacct"] == paths["cpu"] == PurePosixPath("/")


def test_the_kernel_reasons_read_as_words() -> None:
    import errno

    said = explain(OSError(errno.EROFS, "Read-only file system"), "create", Path("/x"))
    assert said.startswith("could not create /x: the cgroup filesystem is mounted read-only")


def test_a_gpu_sandbox_without_a_memory_bound_is_refused_unless_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unbounded = SandboxLimits(None, cgroup_problem="could not create /x: read-only")
    with pytest.raises(UnboundedGpuError, match="could not create /x") as refused:
        refuse_unbounded_gpu(unbounded)
    assert "JAXJUDGE_ALLOW_UNBOUNDED_GPU_MEMORY" in str(refused.value)
    monkeypatch.setattr(settings, "allow_unbounded_gpu_memory", True)
    refuse_unbounded_gpu(unbounded)
