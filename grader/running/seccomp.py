"""The seccomp filter every sandbox runs under (defence in depth).

Bubblewrap's namespaces are the isolation; this filter removes kernel surface
that a grading child never needs: debugging other processes, the kernel
keyring, new namespaces and mounts, io_uring, BPF, perf, module loading, every
socket family except Unix sockets, and the calls that read or change state the
whole machine shares (``sysinfo``'s free memory and load, the page cache's
contents through ``cachestat``, ``RWF_NOWAIT`` reads and ``POSIX_FADV_DONTNEED``).
Default: allow (JAX and XLA use a wide range of ordinary system calls). Bubblewrap
loads the filter right before it executes the child, so its own setup is unaffected.

No sandbox starts without it: where the filter cannot be built (libseccomp absent,
pyseccomp not installed), ``filter_fd`` raises ``SeccompUnavailableError`` saying what
to install, and `jaxjudge doctor` says the same before any submission arrives.
"""

from __future__ import annotations

import errno
import os
import socket
import tempfile
from functools import cache

DENIED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "kexec_load",
    "init_module",
    "finit_module",
    "delete_module",
    "userfaultfd",
    "open_by_handle_at",
    # Machine-wide counters and the page cache's state (grader/running/proc_view.py
    # says why): free memory, load and process count; which pages of a file are cached.
    "sysinfo",
    "cachestat",
)
POSIX_FADV_DONTNEED = 4  # drops a file's cached pages, for every process that reads it
RWF_NOWAIT = 0x08  # reads only what is cached: says what another process read
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
NAMESPACE_FLAGS = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)


class SeccompUnavailableError(RuntimeError):
    """The filter cannot be built on this host: no sandbox may start."""


@cache
def filter_bpf() -> bytes:
    """The compiled filter; ``SeccompUnavailableError`` where it cannot be built."""
    try:
        import pyseccomp as seccomp
    # pyseccomp raises RuntimeError when it finds no libseccomp.so.2 to load.
    except (ImportError, OSError, RuntimeError) as error:
        raise SeccompUnavailableError(
            f"the sandboxes' seccomp filter cannot be built ({error}): install libseccomp"
            " (Debian: apt-get install libseccomp2) and pyseccomp (`make venv`)"
        ) from None
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    rules.add_rule(
        seccomp.ERRNO(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX)
    )
    for flag in NAMESPACE_FLAGS:  # one rule per flag: any one of them is refused
        rules.add_rule(
            seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag)
        )
    # A read-only file's cached pages are shared by every sandbox: none may drop
    # them, or ask which are there.
    rules.add_rule(
        seccomp.ERRNO(errno.EPERM), "fadvise64", seccomp.Arg(2, seccomp.EQ, POSIX_FADV_DONTNEED)
    )
    for call in ("preadv2", "pwritev2"):
        rules.add_rule(
            seccomp.ERRNO(errno.EOPNOTSUPP),
            call,
            seccomp.Arg(5, seccomp.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT),
        )
    # clone3 passes its flags in memory, where seccomp cannot look: answer
    # ENOSYS so libc falls back to clone(), whose flags the rule above checks.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as handle:
        rules.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def filter_fd() -> int:
    """A fresh readable fd holding the filter, for `bwrap --seccomp FD`."""
    program = filter_bpf()
    fd = os.memfd_create("jaxjudge-seccomp")
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
