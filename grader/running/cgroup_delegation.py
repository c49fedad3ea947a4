"""Finding, and where this process may, making the cgroup its sandboxes' groups go in.

Hosts put a grading process in very different places: a systemd service with
``Delegate=yes`` (a subtree of its own, controllers enabled), a container or a
Kubernetes pod (the container's own cgroup, often with the controllers not enabled
below it, and the cgroup filesystem often mounted read-only), a VM's agent that
starts commands in a group of its own (``0::/process_api/<id>``, controllers not
delegated). What the sandboxes need is the same everywhere: a group of this process's
own in which ``memory`` and ``pids`` (and, for CPU shares, ``cpu``) can be set per
child group.

cgroup v2, step by step, each step said in the start-up line (``Detection.steps``):

1. This process's group is read from /proc/self/cgroup and placed in the mounted
   cgroup2 filesystem through /proc/self/mountinfo (a container without a cgroup
   namespace sees a bind-mounted subtree, whose root is not the hierarchy's).
2. A controller the group is not offered (its parent did not enable it) is enabled
   from the nearest ancestor that has it downwards (``cgroup.subtree_control``), where
   this process may write there: root on a VM, or a delegated subtree.
3. The group's own processes move into a leaf, ``jaxjudge-service`` (the kernel's "no
   internal processes" rule: a group with processes cannot enable controllers for its
   children), then the controllers are enabled for the groups below.

Where a step is refused, ``Detection.problem`` says which file refused what and
why, and docs/deployment.md ("Memory bounds") says what to configure. cgroup v1:
writable ``memory`` and ``pids`` hierarchies (``cpu``, ``cpuacct`` where usable), this
process's group in each found the same way.

Every read and write goes through a ``CgroupFs``: the kernel's files here, an
emulation of their rules in the tests (tests/grader/running/test_cgroup_delegation.py).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

REQUIRED = ("memory", "pids")
OPTIONAL = ("cpu",)
SERVICE_LEAF = "jaxjudge-service"
ADVICE = "see docs/deployment.md, 'Memory bounds'"


class CgroupFs(Protocol):
    """The files a cgroup layout is found and made through."""

    def read(self, path: Path) -> str: ...
    def write(self, path: Path, text: str) -> None: ...
    def mkdir(self, path: Path) -> None: ...
    def own_cgroups(self) -> str: ...  # /proc/self/cgroup
    def mountinfo(self) -> str: ...  # /proc/self/mountinfo


class KernelFs:
    """The real files."""

    def read(self, path: Path) -> str:
        return path.read_text()

    def write(self, path: Path, text: str) -> None:
        path.write_text(text)

    def mkdir(self, path: Path) -> None:
        path.mkdir(exist_ok=True)

    def own_cgroups(self) -> str:
        return Path("/proc/self/cgroup").read_text()

    def mountinfo(self) -> str:
        return Path("/proc/self/mountinfo").read_text()


class UnusableError(Exception):
    """No layout of this version can be used here; the message says why."""


class NotThisVersionError(Exception):
    """This cgroup version is not how this host offers its controllers."""


@dataclass(frozen=True)
class Mount:
    point: Path
    root: PurePosixPath  # the hierarchy's path that is mounted at ``point``
    fstype: str
    options: frozenset[str]  # super options: the controllers of a v1 hierarchy


@dataclass
class Found:
    """A usable group per controller, and what was changed to get there."""

    version: int
    groups: dict[str, Path]  # controller -> the group sandboxes' groups are made under
    steps: list[str] = field(default_factory=list)
    moved_service: bool = False


def _unescape(text: str) -> str:
    return text.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")


def parse_mountinfo(text: str) -> list[Mount]:
    """The cgroup mounts of /proc/self/mountinfo."""
    mounts = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        mounts.append(
            Mount(
                Path(_unescape(fields[4])),
                PurePosixPath(_unescape(fields[3])),
                tail[0],
                frozenset(tail[2].split(",")),
            )
        )
    return mounts


def own_paths(text: str) -> dict[str, PurePosixPath]:
    """This process's group per v1 controller, and under "" its v2 group."""
    paths: dict[str, PurePosixPath] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _hierarchy, names, path = parts
        for name in names.split(",") if names else [""]:
            paths[name] = PurePosixPath(path)
    return paths


def place(mount: Mount, own: PurePosixPath) -> Path:
    """Where the group ``own`` (as /proc/self/cgroup names it) is in ``mount``."""
    try:
        relative = own.relative_to(mount.root)
    except ValueError:
        raise UnusableError(
            f"this process's cgroup {own} is outside the part of the hierarchy mounted at"
            f" {mount.point} ({mount.root}); {ADVICE}"
        ) from None
    return mount.point / relative


def explain(error: OSError, action: str, path: Path) -> str:
    """One sentence: what was refused, where, and the kernel's reason in words."""
    reasons = {
        errno.EROFS: "the cgroup filesystem is mounted read-only (a container's or a pod's)",
        errno.EACCES: "permission denied: not root, and the group is not delegated to this user",
        errno.EPERM: "not permitted: not root, and the group is not delegated to this user",
        errno.EBUSY: "the group holds processes of its own (the no-internal-processes rule)",
        errno.ENOENT: "a controller the parent group does not offer",
        errno.EOPNOTSUPP: "the group is threaded",
    }
    reason = reasons.get(error.errno or 0, error.strerror or str(error))
    return f"could not {action} {path}: {reason}; {ADVICE}"


def controllers(fs: CgroupFs, group: Path, name: str = "cgroup.controllers") -> set[str]:
    return set(fs.read(group / name).split())


# --- cgroup v2 ---------------------------------------------------------------------


def _v2_mount(mounts: list[Mount]) -> Mount:
    candidates = [m for m in mounts if m.fstype == "cgroup2"]
    if not candidates:
        raise NotThisVersionError("no cgroup2 filesystem is mounted")
    # The unified hierarchy itself where it is the host's (/sys/fs/cgroup), else the
    # one a hybrid host mounts beside its v1 hierarchies (/sys/fs/cgroup/unified).
    return min(candidates, key=lambda m: len(m.point.parts))


def _offer(fs: CgroupFs, mount: Mount, group: Path, controller: str, found: Found) -> None:
    """Make ``group`` offered ``controller``, enabling it from the nearest ancestor that
    has it downwards."""
    if controller in controllers(fs, group):
        return
    if group == mount.point:
        raise UnusableError(
            f"the {controller} controller is not offered at {mount.point}, the top of the"
            f" cgroup tree this process sees; {ADVICE}"
        )
    parent = group.parent
    _offer(fs, mount, parent, controller, found)
    try:
        fs.write(parent / "cgroup.subtree_control", f"+{controller}")
    except OSError as error:
        raise UnusableError(explain(error, f"enable {controller} in", parent)) from None
    found.steps.append(f"enabled {controller} for the groups below {parent}")


def _move_processes_into_leaf(fs: CgroupFs, group: Path) -> None:
    leaf = group / SERVICE_LEAF
    fs.mkdir(leaf)
    for _ in range(10):  # processes may fork while we move them
        pids = fs.read(group / "cgroup.procs").split()
        if not pids:
            return
        for pid in pids:
            try:
                fs.write(leaf / "cgroup.procs", pid)
            except ProcessLookupError:
                continue
            except OSError as error:
                if error.errno == errno.ESRCH:
                    continue
                raise UnusableError(
                    explain(error, "move this service's processes into", leaf)
                ) from None


def enable_below(
    fs: CgroupFs, group: Path, wanted: tuple[str, ...], found: Found | None = None
) -> None:
    """Enable ``wanted`` for the groups below ``group``, moving its own processes into a
    leaf first if it has any; what was changed goes into ``found``'s steps."""
    found = found or Found(0, {})
    missing = [c for c in wanted if c not in controllers(fs, group, "cgroup.subtree_control")]
    if not missing:
        return
    text = " ".join(f"+{c}" for c in missing)
    try:
        fs.write(group / "cgroup.subtree_control", text)
    except OSError as error:
        if error.errno != errno.EBUSY:
            raise UnusableError(explain(error, f"enable {', '.join(missing)} in", group)) from None
        _move_processes_into_leaf(fs, group)
        found.moved_service = True
        found.steps.append(f"moved this service's processes into {group / SERVICE_LEAF}")
        try:
            fs.write(group / "cgroup.subtree_control", text)
        except OSError as again:
            raise UnusableError(explain(again, f"enable {', '.join(missing)} in", group)) from None
    found.steps.append(f"enabled {', '.join(missing)} for the groups below {group}")


def find_v2(fs: CgroupFs, mounts: list[Mount], own: dict[str, PurePosixPath]) -> Found:
    mount = _v2_mount(mounts)
    top = controllers(fs, mount.point)
    if not set(REQUIRED) & top and any(m.fstype == "cgroup" for m in mounts):
        raise NotThisVersionError("the controllers are on cgroup v1 hierarchies (a hybrid host)")
    if "" not in own:
        raise NotThisVersionError("this process has no cgroup v2 group")
    group = place(mount, own[""])
    found = Found(2, {})
    for controller in REQUIRED:
        _offer(fs, mount, group, controller, found)
    enable_below(fs, group, REQUIRED, found)
    found.groups = dict.fromkeys(REQUIRED, group)
    for controller in OPTIONAL:
        try:
            _offer(fs, mount, group, controller, found)
            enable_below(fs, group, (controller,), found)
        except UnusableError:
            continue  # CPU shares are a nicety: without them sandboxes compete equally
        found.groups[controller] = group
    return found


# --- cgroup v1 ---------------------------------------------------------------------


def _v1_group(mounts: list[Mount], own: dict[str, PurePosixPath], name: str) -> Path:
    mount = next((m for m in mounts if m.fstype == "cgroup" and name in m.options), None)
    if mount is None or name not in own:
        raise UnusableError(f"no cgroup v1 hierarchy has the {name} controller; {ADVICE}")
    return place(mount, own[name])


def find_v1(mounts: list[Mount], own: dict[str, PurePosixPath]) -> Found:
    if not any(m.fstype == "cgroup" for m in mounts):
        raise UnusableError(f"no cgroup hierarchy is mounted; {ADVICE}")
    found = Found(1, {})
    for name in (*REQUIRED, "cpu", "cpuacct"):
        try:
            group = _v1_group(mounts, own, name)
        except UnusableError:
            if name in REQUIRED:
                raise
            continue
        found.groups[name] = group
    return found


def find(fs: CgroupFs) -> Found:
    """This process's usable groups (made usable where it may), or ``UnusableError``."""
    mounts = parse_mountinfo(fs.mountinfo())
    own = own_paths(fs.own_cgroups())
    try:
        return find_v2(fs, mounts, own)
    except NotThisVersionError:
        return find_v1(mounts, own)
