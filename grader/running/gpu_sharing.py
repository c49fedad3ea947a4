"""How GPU sandboxes share one card: a cap on how many run at once, a device-memory
budget each, and a watch from outside that enforces it.

- **Slots.** At most ``settings.gpu_max_sandboxes`` GPU children exist at once on
  this machine, idle or busy, across every worker process: each holds an
  exclusive ``flock`` on one slot file under the data directory while it lives
  (the kernel releases it when the holder dies, so a crashed worker frees its
  slots). A child that finds no slot within ``settings.gpu_slot_wait_seconds``
  is the grader's problem (``GpuBusyError``): the submission goes back to the
  queue, it is never the learner's error.
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
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from grader.config import settings

log = logging.getLogger("jaxjudge.gpu")
NVIDIA_SMI_SECONDS = 5.0


class GpuBusyError(RuntimeError):
    """Every GPU sandbox slot stayed taken for the whole wait: try later."""


def _nvidia_smi(*query: str) -> str | None:
    path = shutil.which("nvidia-smi")
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, *query, "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def parse_card_memory(text: str) -> int | None:
    """The first card's total memory in MiB, from ``--query-gpu=memory.total``."""
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            return int(line.strip())
    return None


def parse_process_memory(text: str) -> dict[int, int]:
    """MiB per host pid, from ``--query-compute-apps=pid,used_memory``."""
    used: dict[int, int] = {}
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 2:
            continue
        with contextlib.suppress(ValueError):
            pid, mib = int(fields[0]), int(fields[1])
            used[pid] = used.get(pid, 0) + mib
    return used


@cache
def card_memory_mib() -> int | None:
    text = _nvidia_smi("--query-gpu=memory.total")
    return None if text is None else parse_card_memory(text)


def memory_fraction(budget_mb: int, card_mib: int | None) -> float:
    """The share of the card a sandbox's allocator may grow to: its budget over the
    card's size, never more than 0.9 (the driver and other sandboxes need some).
    Unknown card: 0.9 divided among the sandboxes that may run at once."""
    if card_mib is None or card_mib <= 0:
        return round(0.9 / max(1, settings.gpu_max_sandboxes), 4)
    return round(min(0.9, budget_mb / card_mib), 4)


def gpu_environment(budget_mb: int) -> dict[str, str]:
    """Environment for a GPU child with ``budget_mb`` of device memory."""
    fraction = str(memory_fraction(budget_mb, card_memory_mib()))
    return {
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
        # Both names: newer JAX reads XLA_CLIENT_MEM_FRACTION, older the other.
        "XLA_PYTHON_CLIENT_MEM_FRACTION": fraction,
        "XLA_CLIENT_MEM_FRACTION": fraction,
    }


def _slot_dir() -> Path:
    folder = settings.data_dir / "run" / "gpu-slots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class GpuSlot:
    """One of ``settings.gpu_max_sandboxes`` places for a GPU child on this machine."""

    def __init__(self, wait_seconds: float | None = None) -> None:
        wait = settings.gpu_slot_wait_seconds if wait_seconds is None else wait_seconds
        deadline = time.monotonic() + wait
        folder = _slot_dir()
        while True:
            for number in range(settings.gpu_max_sandboxes):
                fd = os.open(
                    folder / f"{number}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self.number, self._fd = number, fd
                return
            if time.monotonic() >= deadline:
                raise GpuBusyError(
                    f"all {settings.gpu_max_sandboxes} GPU sandbox slots stayed taken for {wait:.0f} s"
                )
            time.sleep(0.2)

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
    """Kill a GPU job's sandbox when its processes hold more device memory than
    ``limit_mb`` (checked every ``interval`` seconds while it runs)."""

    def __init__(
        self, root_pid: int, limit_mb: int, kill: Callable[[], None], interval: float = 0.5
    ) -> None:
        self.root_pid, self.limit_mb, self.kill, self.interval = root_pid, limit_mb, kill, interval
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
            text = _nvidia_smi("--query-compute-apps=pid,used_memory")
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
