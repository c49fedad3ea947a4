"""How GPU sandboxes share a card (grader/running/gpu_sharing.py): the parts that need no GPU
(slots across processes and their hand-over, the environment, the process tree) are tested here."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.config import settings
from grader.running import gpu_sharing
from grader.running.gpu_card import parse_process_memory
from grader.running.gpu_sharing import GpuBusyError, GpuSlot, descendants, used_mib


@pytest.fixture
def two_slots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(settings, "data_dir", tmp_path)
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 2)
    return tmp_path


def test_no_more_gpu_children_than_slots_and_a_freed_slot_is_taken(two_slots: Path) -> None:
    first, second = GpuSlot(0), GpuSlot(0)
    assert {first.number, second.number} == {0, 1}
    with pytest.raises(GpuBusyError, match="all 2 GPU sandbox slots"):
        GpuSlot(0.3)
    second.release()
    third = GpuSlot(0)
    assert third.number == second.number
    first.release()
    third.release()


def test_slots_are_shared_with_other_processes_and_freed_when_they_die(two_slots: Path) -> None:
    """Two worker processes on one machine count against one cap; a worker that dies
    (SIGKILL, no clean-up) gives its slots back through the kernel."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from grader.running.gpu_sharing import GpuSlot; "
            "a, b = GpuSlot(5), GpuSlot(5); print('held', flush=True); time.sleep(60)",
        ],
        env={**os.environ, "JAXJUDGE_DATA_DIR": str(two_slots), "JAXJUDGE_GPU_MAX_SANDBOXES": "2"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(GpuBusyError):
            GpuSlot(0.3)
        holder.kill()
        holder.wait()
        GpuSlot(2).release()
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()  # type: ignore[union-attr]


def test_a_process_tree_uses_the_device_memory_of_its_own_processes() -> None:
    used = parse_process_memory("1234, 682\n1234, 100\n99, 5\n")
    assert used_mib({1234, 7}, used) == 782


def test_descendants_follow_the_process_tree() -> None:
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, time; subprocess.Popen(['sleep', '30']); time.sleep(30)",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while len(found := descendants(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert parent.pid in found and len(found) >= 2
        assert os.getpid() not in found
    finally:
        for pid in descendants(parent.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        parent.wait()


def test_without_nvidia_smi_the_watch_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("grader.running.gpu_sharing.shutil.which", lambda _name: None)
    watch = gpu_sharing.MemoryWatch(os.getpid(), 2048, kill=lambda: None).start()
    watch.stop()
    assert "bounded by XLA's allocator only" in caplog.text
    assert not watch.exceeded


def _take_in_background(**kwargs: object) -> tuple[threading.Thread, list[GpuSlot]]:
    got: list[GpuSlot] = []
    thread = threading.Thread(target=lambda: got.append(GpuSlot(10, **kwargs)), daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread, got


def _until(condition: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_a_child_needed_now_goes_before_a_standby_one(two_slots: Path) -> None:
    """A warm pool's child (standby) never takes a slot while a grading or a trusted run
    waits for one, whichever asked first."""
    first, second = GpuSlot(0), GpuSlot(0)
    standby, standby_got = _take_in_background(standby=True)
    time.sleep(0.3)  # the standby child asked first
    needed, needed_got = _take_in_background()
    assert _until(gpu_sharing.slot_wanted)
    first.release()
    needed.join(5)
    assert len(needed_got) == 1 and not standby_got
    assert not gpu_sharing.slot_wanted()  # its want is gone with the wait
    second.release()
    standby.join(5)
    assert len(standby_got) == 1
    needed_got[0].release()
    standby_got[0].release()


def test_a_want_of_a_waiter_that_died_is_forgotten(two_slots: Path) -> None:
    held = [GpuSlot(0), GpuSlot(0)]
    waiter = subprocess.Popen(
        [sys.executable, "-c", "from grader.running.gpu_sharing import GpuSlot; GpuSlot(60)"],
        env={**os.environ, "JAXJUDGE_DATA_DIR": str(two_slots), "JAXJUDGE_GPU_MAX_SANDBOXES": "2"},
    )
    try:
        assert _until(gpu_sharing.slot_wanted)
        waiter.kill()
        waiter.wait()
        assert not gpu_sharing.slot_wanted()
        assert not list((two_slots / "run" / "gpu-slots" / "wants").iterdir())
    finally:
        waiter.kill()
        waiter.wait()
        for slot in held:
            slot.release()


def test_a_want_is_never_seen_before_it_is_locked(
    two_slots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another thread looks for wants (a standby child's wait, the pool's watch) just as a
    child needed now files one: it must not find the file unlocked, take it for a dead
    waiter's and remove it. That lost want let standby children take slots ahead of the
    job (a full `make test` on a loaded machine caught it in test_pool.py)."""
    held = [GpuSlot(0), GpuSlot(0)]
    real_flock = fcntl.flock
    looked: list[bool] = []

    def look_first(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX and not looked:
            looked.append(gpu_sharing.slot_wanted())  # in the window before the lock
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", look_first)
    needed, needed_got = _take_in_background()
    try:
        assert _until(lambda: bool(looked))
        assert _until(gpu_sharing.slot_wanted)  # the want survived the look
    finally:
        held[0].release()
        needed.join(5)
        held[1].release()
        for slot in needed_got:
            slot.release()


def test_the_watch_allows_the_cuda_context_beside_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NVML counts the context and the libraries' workspaces as the process's: a sandbox
    whose allocations stay inside its budget is not killed for them."""
    monkeypatch.setattr(settings, "gpu_context_mb", 1024)
    assert gpu_sharing.MemoryWatch(os.getpid(), 2048, kill=lambda: None).limit_mb == 3072
