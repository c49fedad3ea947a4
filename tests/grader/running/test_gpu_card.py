"""What this machine's card is (grader/running/gpu_card.py): nvidia-smi's text read
strictly, a sandbox's share of the card, whether the slots fit. No GPU is asked."""

from __future__ import annotations

import pytest

from grader.config import settings
from grader.running.gpu_card import (
    Card,
    memory_fraction,
    parse_card,
    parse_card_memory,
    parse_process_memory,
    slot_plan,
)


def test_nvml_text_is_read_strictly() -> None:
    assert parse_card_memory("81559\n81559\n") == 81559
    assert parse_card_memory("[N/A]\n") is None
    used = parse_process_memory("1234, 682\n1234, 100\n99, 5\nnot, a number\n[N/A]\n")
    assert used == {1234: 782, 99: 5}


def test_a_sandbox_budget_is_its_limit_over_the_card(monkeypatch: pytest.MonkeyPatch) -> None:
    assert memory_fraction(2048, 81920) == 0.025
    assert memory_fraction(200_000, 81920) == 0.9  # never the whole card
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 3)
    assert memory_fraction(2048, None) == 0.3  # card size unknown: split evenly


def test_the_card_line_is_read_strictly() -> None:
    card = Card("NVIDIA H100 80GB HBM3", 81559, "580.159.04")
    assert parse_card("NVIDIA H100 80GB HBM3, 81559, 580.159.04\n") == card
    assert parse_card("[N/A]\n") is None


def test_slots_fit_when_each_limit_and_cuda_s_own_fit_in_nine_tenths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "gpu_context_mb", 1024)
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 17)
    assert slot_plan(81559, 3072).fits  # 17 x 4096 = 69632 <= 73403
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 18)
    plan = slot_plan(81559, 3072)
    assert not plan.fits
    assert "to 17" in plan.advice()
