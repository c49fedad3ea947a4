"""No sandbox reads what another one running beside it does (bench/sandbox_channels.py).

Two real sandboxes, started as the grader starts them, run side by side: a sender
changes everything a sandbox can change in a random pattern of slots, a receiver reads
everything a sandbox can read, every slot, and decodes the pattern from each number
it saw. Through the machine's state (memory, files, locks, sockets, processes) it
recovers nothing; a guard run with the view of /proc and the locked-memory limit
taken away recovers the pattern (from `meminfo`, the kernel's counts of files,
`buddyinfo`, ...: which ones depends on the load beside it), so the receiver is known
to look. Through the CPU, what is left is the receiver's own speed: no file carries
it, and its rate is printed (docs/security.md, "Between two sandboxes").
"""

from __future__ import annotations

import pytest

from bench import sandbox_channels as experiment
from grader.running import launch, proc_view, sandbox

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.xdist_group("hostile")]

# What a receiver measures of itself: how fast it runs (the CPU channel that remains).
OWN_SPEED = {experiment.CPU_PROBE, "/proc/self/schedstat"}


def test_the_machine_state_carries_nothing_from_one_sandbox_to_another() -> None:
    count, slot = experiment.EXPERIMENTS[experiment.Signal.STATE]
    found, refused, sources = experiment.measure(experiment.Signal.STATE, count, slot)
    assert found == []
    assert "mlock" in refused
    assert sources > 100  # it read /proc, not nothing


def test_the_receiver_finds_the_pattern_where_the_view_is_taken_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(proc_view, "bwrap_arguments", lambda memory_mb: [])
    with_memlock = launch.rlimit_command

    def unlocked(**limits: int | None) -> list[str]:
        return [arg for arg in with_memlock(**limits) if arg != "--memlock=0"]  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox, "rlimit_command", unlocked)
    # Which files carry it depends on the load beside the run: CI's other test workers
    # move `meminfo` and the file counts enough to drown them on one run, not the
    # buddy allocator's counts or the timer list, and now and then every one on a run.
    # The guard asks for one run of three where something carries it.
    runs = []
    for _ in range(3):
        found, refused, _ = experiment.measure(experiment.Signal.STATE, 16, 1.0)
        assert refused == []
        sources = {channel.source for channel in found} - OWN_SPEED
        runs.append(sources)
        if sources:
            break
    assert any(runs), f"with the view taken away the receiver decoded nothing: {runs}"


def test_only_a_sandboxs_own_speed_tells_it_of_another_ones_cpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    count, slot = experiment.EXPERIMENTS[experiment.Signal.CPU]
    found, _, _ = experiment.measure(experiment.Signal.CPU, count, slot)
    assert {channel.source for channel in found} <= OWN_SPEED
    with capsys.disabled():
        rates = ", ".join(f"{c.source}: {c.bits_per_second:.1f} bits/s" for c in found)
        print(f"\nCPU channel between two sandboxes: {rates or 'none decoded'}")
