"""A sandbox's /proc describes the sandbox, not the machine (grader/running/proc_view.py).
That nothing of another sandbox shows through it is tests/hostile/test_sandbox_channels.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from grader.config import settings
from grader.running import proc_view
from grader.running.sandbox import bwrap_arguments


def test_meminfo_says_the_sandboxs_own_memory_all_of_it_available() -> None:
    rows = {
        name: value.strip()
        for name, value in (line.split(":") for line in proc_view.meminfo(2048).splitlines())
    }
    assert rows["MemTotal"].split() == ["2097152", "kB"]
    assert rows["MemAvailable"] == rows["MemFree"] == rows["MemTotal"]
    assert rows["Mlocked"].split() == ["0", "kB"]


def test_stat_counts_the_sandboxs_cpus_with_no_time_spent() -> None:
    lines = proc_view.stat(3).splitlines()
    cpus = [line for line in lines if line.startswith("cpu") and line[3].isdigit()]
    assert len(cpus) == 3
    assert all(set(line.split()[1:]) == {"0"} for line in cpus)


def test_only_what_the_host_has_is_covered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "data_dir", tmp_path / "data")
    proc = tmp_path / "proc"
    (proc / "sys" / "fs").mkdir(parents=True)
    (proc / "pressure").mkdir()
    for name in ("meminfo", "loadavg", "sys/fs/file-nr"):
        (proc / name).write_text("live\n")
    args = proc_view.bwrap_arguments(1024, proc)
    targets = args[2::3]
    assert targets == ["/proc/meminfo", "/proc/loadavg", "/proc/sys/fs/file-nr", "/proc/pressure"]
    sources = [Path(source) for source in args[1::3]]
    assert "MemTotal:" in sources[0].read_text() and sources[2].read_text() == ""
    assert sources[3].is_dir() and not any(sources[3].iterdir())
    assert proc_view.bwrap_arguments(1024, proc) == args  # written once, then reused


@pytest.mark.sandbox
def test_inside_a_sandbox_proc_shows_the_sandbox() -> None:
    argv = bwrap_arguments(device="cpu", result_fd=1, memory_mb=1536, seccomp_fd=None)
    cut = len(argv) - 1 - argv[::-1].index("--")
    program = (
        "import os; print(open('/proc/meminfo').readline().split()[1]);"
        " print(open('/proc/loadavg').read().strip()); print(os.cpu_count());"
        " print(sorted(os.listdir('/proc/pressure')))"
    )
    shown = subprocess.run(
        [*argv[: cut + 1], str(settings.child_python), "-I", "-c", program],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout.splitlines()
    assert shown == [str(1536 * 1024), "0.00 0.00 0.00 1/1 1", str(os.cpu_count()), "[]"]
