"""What this machine's GPU is, asked of ``nvidia-smi``: the card (model, memory, driver),
the device memory each process holds, the children's JAX plugin, and whether a number
of sandbox slots fits on the card. grader/running/gpu_sharing.py shares the card by
these facts; `jaxjudge doctor --device gpu` reports them."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

from grader.config import settings
from grader.versions import runtime_plugins

NVIDIA_SMI_SECONDS = 5.0
MAX_FRACTION = 0.9  # of a card, for its sandboxes together: the driver needs some


def nvidia_smi(*query: str) -> str | None:
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


@dataclass(frozen=True)
class Card:
    name: str
    memory_mib: int
    driver: str


def parse_card(text: str) -> Card | None:
    """The first card, from ``--query-gpu=name,memory.total,driver_version``."""
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) == 3:
            with contextlib.suppress(ValueError):
                return Card(fields[0], int(fields[1]), fields[2])
    return None


def card_description() -> Card | None:
    text = nvidia_smi("--query-gpu=name,memory.total,driver_version")
    return None if text is None else parse_card(text)


def cuda_plugin() -> str | None:
    """The children's JAX GPU plugin and its version (None: JAX cannot use a GPU)."""
    plugins = runtime_plugins()
    return ", ".join(plugins) if plugins else None


@dataclass(frozen=True)
class SlotPlan:
    """Whether ``slots`` GPU children at once fit on a card, each at the largest memory
    limit of the bank plus what CUDA holds beside it."""

    slots: int
    per_child_mib: int
    card_mib: int

    @property
    def fits(self) -> bool:
        return self.slots * self.per_child_mib <= MAX_FRACTION * self.card_mib

    def describe(self) -> str:
        return (
            f"{self.slots} sandbox slots x {self.per_child_mib} MiB (largest limit + CUDA's"
            f" own) = {self.slots * self.per_child_mib} MiB of {self.card_mib} MiB"
        )

    def advice(self) -> str:
        fitting = max(1, int(MAX_FRACTION * self.card_mib // self.per_child_mib))
        return f"lower JAXJUDGE_GPU_MAX_SANDBOXES to {fitting} (or the problems' memory_mb)"


def slot_plan(card_mib: int, largest_limit_mb: int) -> SlotPlan:
    return SlotPlan(
        settings.gpu_max_sandboxes, largest_limit_mb + settings.gpu_context_mb, card_mib
    )


@cache
def card_memory_mib() -> int | None:
    text = nvidia_smi("--query-gpu=memory.total")
    return None if text is None else parse_card_memory(text)


def memory_fraction(budget_mb: int, card_mib: int | None) -> float:
    """The share of the card a sandbox's allocator may grow to: its budget over the
    card's size, never more than 0.9 (the driver and other sandboxes need some).
    Unknown card: 0.9 divided among the sandboxes that may run at once."""
    if card_mib is None or card_mib <= 0:
        return round(MAX_FRACTION / max(1, settings.gpu_max_sandboxes), 4)
    return round(min(MAX_FRACTION, budget_mb / card_mib), 4)
