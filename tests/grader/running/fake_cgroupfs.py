"""A cgroup v2 filesystem in a temporary folder, with the kernel's rules where
grader/running/cgroup_delegation.py relies on them, for the hosts this machine is
not: a systemd service with ``Delegate=yes``, a VM agent that starts commands in a
group of its own with no controller delegated, a container or pod (a cgroup
namespace, a read-only mount), a group whose parent holds processes.

The rules kept: a group is offered the controllers its parent enabled in
``cgroup.subtree_control`` (the top one, all of ``offered``); enabling one that is
not offered is ENOENT; a group other than the hierarchy's root that holds processes
cannot enable controllers for its children, and a process cannot join a group that
has them enabled (EBUSY, "no internal processes"); a process is in one group at a
time; a read-only mount refuses every write (EROFS); a group named in ``refuse``
refuses writes to its files to this user (EACCES)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

SPECIAL = ("cgroup.controllers", "cgroup.subtree_control", "cgroup.procs")


@dataclass
class _Group:
    offered: set[str]
    enabled: set[str] = field(default_factory=set)
    procs: list[int] = field(default_factory=list)


class FakeCgroupFs:
    """``hierarchy`` is the folder standing for the hierarchy's root; the mount shows
    ``mount_root`` of it at the same folder + ``mount_root`` (a container without a
    cgroup namespace sees its own subtree) and /proc/self/cgroup names the process's
    group relative to ``namespace_root`` (a container with one sees "/")."""

    def __init__(
        self,
        hierarchy: Path,
        *,
        offered: tuple[str, ...] = ("cpu", "memory", "pids", "io"),
        read_only: bool = False,
        mount_root: str = "/",
        namespace_root: str = "/",
    ) -> None:
        self.hierarchy = hierarchy
        self.read_only = read_only
        self.mount_root = PurePosixPath(mount_root)
        self.namespace_root = PurePosixPath(namespace_root)
        self.refuse: set[Path] = set()
        self.groups: dict[Path, _Group] = {hierarchy: _Group(set(offered))}
        hierarchy.mkdir(parents=True, exist_ok=True)
        self.pid = os.getpid()

    # --- setting the scene -------------------------------------------------------

    def group(self, relative: str, *, enabled: str = "", procs: tuple[int, ...] = ()) -> Path:
        """Make the group ``relative`` (and its parents) as the host left it."""
        path = self.hierarchy
        for part in PurePosixPath(relative).parts[1:]:
            parent = self.groups[path]
            path = path / part
            if path not in self.groups:
                path.mkdir()
                self.groups[path] = _Group(set(parent.enabled))
        self.groups[path].enabled |= set(enabled.split())
        for child, state in self.groups.items():
            if child.parent == path:
                state.offered = set(self.groups[path].enabled)
        for pid in procs:
            self._move(pid, path)
        return path

    def where(self, pid: int) -> Path:
        return next(path for path, state in self.groups.items() if pid in state.procs)

    @property
    def mount_point(self) -> Path:
        return self.hierarchy.joinpath(*self.mount_root.parts[1:])

    # --- CgroupFs ------------------------------------------------------------------

    def read(self, path: Path) -> str:
        if path.name in SPECIAL:
            state = self._state(path.parent)
            if path.name == "cgroup.procs":
                return "".join(f"{pid}\n" for pid in state.procs)
            return " ".join(
                sorted(state.offered if path.name == "cgroup.controllers" else state.enabled)
            )
        return path.read_text()

    def write(self, path: Path, text: str) -> None:
        self._writable(path.parent, path)
        state = self._state(path.parent)
        if path.name == "cgroup.subtree_control":
            wanted = {word[1:] for word in text.split() if word.startswith("+")}
            if wanted - state.offered:
                raise OSError(errno.ENOENT, "No such file or directory", str(path))
            if state.procs and path.parent != self.hierarchy:
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            state.enabled |= wanted
            for child, child_state in self.groups.items():
                if child.parent == path.parent:
                    child_state.offered = set(state.enabled)
        elif path.name == "cgroup.procs":
            if state.enabled and path.parent != self.hierarchy:
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            self._move(int(text), path.parent)
        else:
            path.write_text(text)

    def mkdir(self, path: Path) -> None:
        if path in self.groups:
            return
        self._writable(path.parent, path)
        path.mkdir()
        self.groups[path] = _Group(set(self._state(path.parent).enabled))

    def own_cgroups(self) -> str:
        where = PurePosixPath("/", *self.where(self.pid).relative_to(self.hierarchy).parts)
        return f"0::{PurePosixPath('/') / where.relative_to(self.namespace_root)}\n"

    def mountinfo(self) -> str:
        # The kernel shows a mount's root relative to the reader's cgroup namespace.
        root = PurePosixPath("/") / self.mount_root.relative_to(self.namespace_root)
        return (
            f"30 23 0:26 {root} {self.mount_point} rw,nosuid - cgroup2 cgroup2 rw\n"
            "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        )

    # --- the kernel's rules ----------------------------------------------------------

    def _state(self, group: Path) -> _Group:
        try:
            return self.groups[group]
        except KeyError:
            raise OSError(errno.ENOENT, "No such file or directory", str(group)) from None

    def _writable(self, group: Path, path: Path) -> None:
        if self.read_only:
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        if group in self.refuse:
            raise OSError(errno.EACCES, "Permission denied", str(path))

    def _move(self, pid: int, group: Path) -> None:
        for state in self.groups.values():
            if pid in state.procs:
                state.procs.remove(pid)
        self.groups[group].procs.append(pid)
