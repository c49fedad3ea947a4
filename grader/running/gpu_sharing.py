"""How GPU sandboxes share one card: a cap on how many run at once, a device-memory
budget each, and a watch from outside that enforces it.

- **Slots.** At most ``settings.gpu_max_sandboxes`` GPU children exist at once on
  this machine, idle or busy, across every worker process: each holds an
  exclusive ``flock`` on one slot file under the data directory while it lives
  (the kernel releases it when the holder dies, so a crashed worker frees its
  slots). A child that finds no slot within ``settings.gpu_slot_wait_seconds``
  is the grader's problem (``GpuBusyError``): the submission goes back to the
  queue, it is never the learner's error.
- **Nobody waits behind an idle child.** A child started ahead of need (a warm
  pool's, ``standby``) takes a slot only while no one else waits for one and gives
  it up when someone does: a child needed now (a grading, a trusted run) waits
  holding a *want* (an exclusive ``flock`` on a file of ``wants/``, dropped by the
  kernel if its holder dies), and every pool closes one of its idle children
  while a want is live (grader/running/pool.py), then starts it again once none is.
- **Allocator budget.** A GPU child's XLA allocator may grow to its memory
  budget, never preallocates (``gpu_environment``), so several share a card.
- **The watch.** XLA's budget binds only XLA's allocator; code that calls CUDA
  itself is bounded by the watch instead: while a GPU job runs, the supervisor
  reads each process's device memory from NVML (``nvidia-smi``) and kills the
  sandbox the moment its processes together hold more than the job's limit
  (``memory_limit_exceeded``).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from grader.config import settings
from grader.running import gpu_card
from grader.running.gpu_card import (
    NVIDIA_SMI_SECONDS,
    card_memory_mib,
    memory_fraction,
    parse_process_memory,
)
from grader.versions import GPU_MATMUL_PRECISION, GPU_XLA_FLAGS, memory_fraction_name

log = logging.getLogger("jaxjudge.gpu")


class GpuBusyError(RuntimeError):
    """Every GPU sandbox slot stayed taken for the whole wait: try later."""


def gpu_environment(budget_mb: int) -> dict[str, str]:
    """Environment for a GPU child with ``budget_mb`` of device memory: its allocator's
    share of the card under the one name the children's jaxlib reads (a jaxlib that
    knows both names refuses to start when given both), and the GPU's XLA flags and
    matrix-product precision (grader/versions.py says why)."""
    return {
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
        memory_fraction_name(): str(memory_fraction(budget_mb, card_memory_mib())),
        "XLA_FLAGS": GPU_XLA_FLAGS,
        "JAX_DEFAULT_MATMUL_PRECISION": GPU_MATMUL_PRECISION,
        # JAX would point XLA's per-fusion autotuning cache into the compilation cache,
        # which a sandbox reads but cannot write (PERMISSION_DENIED at every compile).
        "JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES": "none",
    }


def _slot_dir() -> Path:
    folder = settings.data_dir / "run" / "gpu-slots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _wants_dir() -> Path:
    folder = _slot_dir() / "wants"
    folder.mkdir(exist_ok=True)
    return folder


def slot_wanted() -> bool:
    """Whether a child needed now waits for a slot on this machine (any process)."""
    for path in _wants_dir().iterdir():
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue  # taken away meanwhile: its waiter has its slot
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True  # its waiter holds it: still waiting
        else:  # nobody holds it: its waiter died while waiting
            with contextlib.suppress(OSError):
                path.unlink()
        finally:
            os.close(fd)
    return False


class _Want:
    """Held while a child needed now waits for a slot."""

    def __init__(self) -> None:
        # Locked before it is visible: ``slot_wanted`` takes a want file it can lock for a
        # dead waiter's and removes it, so one made in the wants folder and locked after
        # could be lost in between, and standby children would go ahead of this one.
        name = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        staging = _slot_dir() / f"want-{name}"
        self._fd = os.open(staging, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        self.path = _wants_dir() / name
        os.rename(staging, self.path)  # the same file, and its lock, now where it is seen

    def drop(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)


def _try_slot(folder: Path) -> tuple[int, int] | None:
    for number in range(settings.gpu_max_sandboxes):
        fd = os.open(folder / f"{number}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return number, fd
    return None


class GpuSlot:
    """One of ``settings.gpu_max_sandboxes`` places for a GPU child on this machine.

    ``standby``: for a child started ahead of need, which waits quietly and never
    takes a slot while a child needed now waits for one."""

    def __init__(self, wait_seconds: float | None = None, *, standby: bool = False) -> None:
        wait = settings.gpu_slot_wait_seconds if wait_seconds is None else wait_seconds
        deadline = time.monotonic() + wait
        folder = _slot_dir()
        want: _Want | None = None
        try:
            while True:
                found = None if standby and slot_wanted() else _try_slot(folder)
                if found is not None:
                    self.number, self._fd = found
                    return
                if time.monotonic() >= deadline:
                    raise GpuBusyError(
                        f"all {settings.gpu_max_sandboxes} GPU sandbox slots stayed taken for"
                        f" {wait:.0f} s"
                    )
                if want is None and not standby:
                    want = _Want()
                time.sleep(0.2)
        finally:
            if want is not None:
                want.drop()

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the only descriptor drops the lock
            self._fd = -1


def descendants(root: int) -> set[int]:
    """``root`` and every process below it (host pids, from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, pending = {root}, [root]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def used_mib(pids: Iterable[int], usage: dict[int, int]) -> int:
    wanted = set(pids)
    return sum(mib for pid, mib in usage.items() if pid in wanted)


class MemoryWatch:
    """Kill a GPU job's sandbox when its processes hold more device memory than its
    budget, ``budget_mb`` (what XLA's allocator may grow to), plus what every CUDA
    process holds besides its allocations (``settings.gpu_context_mb``: the context,
    its modules, the math libraries' workspaces), which NVML counts too. Checked every
    ``interval`` seconds while it runs."""

    def __init__(
        self, root_pid: int, budget_mb: int, kill: Callable[[], None], interval: float = 0.5
    ) -> None:
        self.root_pid, self.kill, self.interval = root_pid, kill, interval
        self.limit_mb = budget_mb + settings.gpu_context_mb
        self.exceeded = False
        self.peak_mib = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> MemoryWatch:
        if shutil.which("nvidia-smi") is None:
            log.warning("nvidia-smi is absent: GPU memory is bounded by XLA's allocator only")
        else:
            self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.wait(self.interval):
            text = gpu_card.nvidia_smi("--query-compute-apps=pid,used_memory")
            if text is None:
                continue
            used = used_mib(descendants(self.root_pid), parse_process_memory(text))
            self.peak_mib = max(self.peak_mib, used)
            if used > self.limit_mb:
                self.exceeded = True
                log.warning(
                    "GPU sandbox %s holds %s MiB > %s MiB: killed",
                    self.root_pid,
                    used,
                    self.limit_mb,
                )
                self.kill()
                return

    def stop(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(timeout=NVIDIA_SMI_SECONDS + 1)
