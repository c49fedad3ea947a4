"""What one sandbox can tell another running beside it (not a test; the hostile test
tests/hostile/test_sandbox_channels.py runs the same experiment and asserts on it).

Two sandboxes start together, as the grader starts them (grader/running/sandbox.py:
the same bubblewrap arguments, seccomp filter, rlimits and cgroup). Slot by slot, the
*sender* either rests or changes everything a sandbox can change (it spins a process
on every CPU, allocates and touches memory, fills its /tmp and /dev/shm, tries to lock
pages, opens hundreds of files and sockets, takes file locks) following a random
pattern of bits. The *receiver*, in the middle of every slot, reads every file it can
read under /proc (its own processes' folders aside), asks the kernel what ``sysinfo``
and ``getloadavg`` say, and counts how many loop iterations it gets through in a
fixed time: the CPU left to it.

Every number the receiver saw becomes a series over the slots. A series is decoded
as the sender's bits with a threshold learnt on the even slots and tried on the odd
ones; its capacity is (1 - H(error rate)) bits per slot, counted only where the
decoding beats chance clearly (``SIGNIFICANT``). A file whose every number is the same
in every slot carries nothing.

    .venv/bin/python -m bench.sandbox_channels [--write]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import time
from dataclasses import dataclass
from enum import StrEnum

from bench.blocks import write_block
from grader.config import PROJECT_ROOT, settings
from grader.running.launch import LaunchSpec
from grader.running.sandbox import SandboxLauncher

SECURITY = PROJECT_ROOT / "docs" / "security.md"
SIGNIFICANT = 0.8  # test-half accuracy a series must reach to count as a channel
CPU_PROBE = "cpu: loop iterations in a fixed time"

SENDER = r"""
import ctypes, fcntl, json, os, socket, sys, time
start, slot, bits, mode = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
refused = set()
def until(moment):
    time.sleep(max(0.0, moment - time.time()))
def spin(end):
    spinners = []
    for _ in range(os.cpu_count() or 1):
        pid = os.fork()
        if pid == 0:
            while time.time() < end:
                pass
            os._exit(0)
        spinners.append(pid)
    for pid in spinners:
        os.waitpid(pid, 0)
def change_state(end):
    held = []
    buffer = ctypes.create_string_buffer(2**20)
    if libc.mlock(buffer, 2**20) != 0:
        refused.add("mlock")
    for number in range(40):
        handle = open(f"/tmp/lock{number}", "w")
        fcntl.flock(handle, fcntl.LOCK_EX)
        held.append(handle)
    for _ in range(150):
        held.extend(os.pipe())
    for _ in range(50):
        held.append(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
    for folder in ("/tmp", "/dev/shm"):
        with open(f"{folder}/fill", "wb") as handle:
            handle.write(b"x" * 8 * 2**20)
    memory = bytearray(48 * 2**20)
    for offset in range(0, len(memory), 4096):
        memory[offset] = 1
    for pid in range(2):
        if os.fork() == 0:  # a short-lived process: the machine's fork count
            os._exit(0)
        os.wait()
    until(end)
    for thing in held:
        thing.close() if hasattr(thing, "close") else os.close(thing)
    for folder in ("/tmp", "/dev/shm"):
        os.unlink(f"{folder}/fill")
until(start)
for index, bit in enumerate(bits):
    end = start + (index + 1) * slot
    if bit == "1":
        spin(end) if mode == "cpu" else change_state(end)
    until(end)
print(json.dumps(sorted(refused)))
"""

RECEIVER = r"""
import ctypes, json, os, re, sys, time
start, slot, count, mode = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
SKIP = {"kmsg", "kcore", "sysrq-trigger", "self", "thread-self", "kpagecount",
        "kpageflags", "kpagecgroup", "pagemap"}
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?")
def readable():
    found = []
    for root, folders, files in os.walk("/proc"):
        folders[:] = [f for f in folders if not f.isdigit() and f not in SKIP]
        found += [os.path.join(root, f) for f in files if f not in SKIP]
    return found
def read_all(paths):
    seen = {}
    for path in paths:
        try:
            with open(path, "rb") as handle:
                data = handle.read(1 << 16)
        except OSError:
            continue
        seen[path] = [float(n) for n in NUMBER.findall(data)[:400]]
    try:
        seen["getloadavg()"] = list(os.getloadavg())
    except OSError:
        pass
    info = (ctypes.c_long * 16)()  # struct sysinfo: uptime, loads[3], freeram, ...
    answer = ctypes.CDLL(None, use_errno=True).sysinfo(info)
    seen["sysinfo()"] = [float(answer)] + ([float(x) for x in info[:8]] if answer == 0 else [])
    return seen
def cpu_left(seconds):
    deadline, loops = time.perf_counter() + seconds, 0
    while time.perf_counter() < deadline:
        loops += 1
    return {"CPU_PROBE": [float(loops)]}
CPU_FILES = ["/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/schedstat",
             "/proc/pressure/cpu", "/proc/self/schedstat"]
paths = [p for p in readable() if p != "/proc/sys/kernel/random/uuid"]
samples = []
for index in range(count):
    time.sleep(max(0.0, start + (index + 0.3) * slot - time.time()))
    began = (time.time() - start) / slot
    seen = read_all(CPU_FILES) | cpu_left(slot * 0.3) if mode == "cpu" else read_all(paths)
    ended = (time.time() - start) / slot
    # A reading that spilled out of its slot is dropped (the machine was slow).
    samples.append(seen if int(began) == int(ended) == index else {})
print(json.dumps(samples))
""".replace("CPU_PROBE", CPU_PROBE)


@dataclass(frozen=True)
class Channel:
    """One series the receiver saw, decoded as the sender's bits."""

    source: str  # a file, or what the receiver asked or measured
    accuracy: float  # on the slots the threshold was not learnt on
    bits_per_second: float


def _entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def decode(series: list[float], bits: str) -> float:
    """Accuracy, on the odd slots, of the threshold learnt on the even ones (0.5 for a
    series that never changes)."""
    if len(set(series)) == 1:
        return 0.5
    ones = [x for i, x in enumerate(series) if i % 2 == 0 and bits[i] == "1"]
    zeros = [x for i, x in enumerate(series) if i % 2 == 0 and bits[i] == "0"]
    if not ones or not zeros:
        return 0.5
    high, low = sum(ones) / len(ones), sum(zeros) / len(zeros)
    middle = (high + low) / 2
    says_one = [(x > middle) is (high > low) for x in series]
    tested = [one is (bits[i] == "1") for i, one in enumerate(says_one)]
    odd = [right for i, right in enumerate(tested) if i % 2 == 1]
    return sum(odd) / len(odd)


def channels(samples: list[dict[str, list[float]]], bits: str, slot: float) -> list[Channel]:
    """Every source that carries the pattern (``SIGNIFICANT`` or better), best first.
    A slot whose reading spilled over into the next one is left out."""
    kept = [index for index, sample in enumerate(samples) if sample]
    samples, bits = [samples[i] for i in kept], "".join(bits[i] for i in kept)
    best: dict[str, float] = {}
    sources = set().union(*samples)
    for source in sources:
        rows = [sample.get(source, []) for sample in samples]
        if not rows:
            continue
        width = min(len(row) for row in rows)
        for field in range(width):
            accuracy = decode([row[field] for row in rows], bits)
            best[source] = max(best.get(source, 0.5), accuracy)
    found = [
        Channel(source, accuracy, max(0.0, 1 - _entropy(1 - accuracy)) / slot)
        for source, accuracy in best.items()
        if accuracy >= SIGNIFICANT
    ]
    return sorted(found, key=lambda channel: -channel.accuracy)


@dataclass
class _Program:
    """A Python program in a sandbox as the grader starts one (its child replaced)."""

    argv: list[str]
    spec: LaunchSpec
    result_fd: int  # the child's result channel, unused by these programs

    @classmethod
    def start(cls, launcher: SandboxLauncher, program: str, *arguments: str) -> _Program:
        read_fd, write_fd = os.pipe()
        os.close(read_fd)
        spec = launcher.launch(device="cpu", memory_mb=1024, result_fd=write_fd)
        cut = len(spec.argv) - 1 - spec.argv[::-1].index("--")  # bubblewrap's own "--"
        python = [str(settings.child_python), "-I", "-c", program, *arguments]
        return cls([*spec.argv[: cut + 1], *python], spec, write_fd)

    def popen(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.argv,
            env=self.spec.env,
            cwd=self.spec.cwd,
            pass_fds=self.spec.pass_fds,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def close(self) -> None:
        for cleanup in self.spec.cleanup:
            cleanup()
        for fd in (*self.spec.pass_fds, self.result_fd):
            os.close(fd)


class Signal(StrEnum):
    """What the sender changes, slot by slot, and so what the receiver looks at."""

    STATE = "state"  # memory, files, locks, sockets, processes: the receiver reads /proc
    CPU = "cpu"  # a spinning process per CPU: the receiver counts its own loop


def run_pair(
    bits: str, slot: float, signal: Signal
) -> tuple[list[dict[str, list[float]]], list[str]]:
    """The receiver's samples, and what the sender was refused (e.g. ``mlock``)."""
    launcher = SandboxLauncher()
    start = f"{time.time() + 4.0:.3f}"
    programs: list[_Program] = []
    processes: list[subprocess.Popen[bytes]] = []
    try:
        programs.append(
            _Program.start(launcher, RECEIVER, start, str(slot), str(len(bits)), signal.value)
        )
        programs.append(_Program.start(launcher, SENDER, start, str(slot), bits, signal.value))
        processes = [program.popen() for program in programs]
        timeout = 4.0 + slot * len(bits) + 60
        outputs = [process.communicate(timeout=timeout) for process in processes]
    finally:
        for process in processes:
            process.kill()
        for program in programs:  # a sandbox that started is cleaned up even if the other failed
            program.close()
    for process, (_, stderr) in zip(processes, outputs, strict=True):
        if process.returncode != 0:
            raise RuntimeError(
                f"a sandbox failed ({process.returncode}): {stderr.decode()[-2000:]}"
            )
    return json.loads(outputs[0][0]), json.loads(outputs[1][0])


def pattern(count: int, seed: int) -> str:
    """``count`` bits, as many ones as zeros, in a random order."""
    bits = ["1"] * (count // 2) + ["0"] * (count - count // 2)
    random.Random(seed).shuffle(bits)
    return "".join(bits)


# (bits, seconds per slot) of each experiment: reading every file of /proc takes a
# loaded 2-core machine most of a second; counting loops, a fraction of a slot.
EXPERIMENTS = {Signal.STATE: (32, 1.0), Signal.CPU: (64, 0.2)}


def measure(signal: Signal, count: int, slot: float) -> tuple[list[Channel], list[str], int]:
    """Channels found, what the sender was refused, and the sources the receiver read."""
    bits = pattern(count, seed=int(time.time()))
    samples, refused = run_pair(bits, slot, signal)
    return channels(samples, bits, slot), refused, len(set().union(*samples))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} by `bench/sandbox_channels.py` on"
        f" {os.cpu_count()} cores (load average {load} when it started), two sandboxes"
        " side by side; a channel counts where its decoding is right on at least"
        f" {SIGNIFICANT:.0%} of the slots it was not learnt on:",
        "",
        "| the sender changes | the receiver reads | bits decoded right | capacity (bits/s) |",
        "|---|---|---|---|",
    ]
    for signal, (count, slot) in EXPERIMENTS.items():
        found, refused, sources = measure(signal, count, slot)
        what = (
            f"memory, files, locks, sockets, processes (refused: {', '.join(refused) or '-'})"
            if signal is Signal.STATE
            else "CPU (a spinning process per core)"
        )
        lines += [
            f"| {what} | {re.sub(r'[|]', '/', c.source)} | {c.accuracy:.0%} |"
            f" {c.bits_per_second:.1f} |"
            for c in found
        ] or [f"| {what} | {sources} sources: none carries it | - | 0 |"]
    print("\n".join(lines))
    if args.write:
        write_block("sandbox_channels", lines, SECURITY)


if __name__ == "__main__":
    main()
