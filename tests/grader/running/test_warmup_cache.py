"""The warm-up compilation cache sandboxes read (grader/running/warmup_cache.py): filled
by a process that ran the library warm-up alone, and filled again when that changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.running import warmup_cache


def test_the_fingerprint_covers_the_warm_up_the_children_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert warmup_cache.WARMUP_SOURCE.name == "warmup.py"
    assert warmup_cache.WARMUP_SOURCE.parent.name == "child"
    before = warmup_cache.fingerprint("cpu")
    edited = tmp_path / "warmup.py"
    edited.write_text(warmup_cache.WARMUP_SOURCE.read_text() + "\n# edited\n")
    monkeypatch.setattr(warmup_cache, "WARMUP_SOURCE", edited)
    assert warmup_cache.fingerprint("cpu") != before


@pytest.mark.sandbox
@pytest.mark.slow
def test_the_cache_fills_and_says_it_is_ready() -> None:
    """A fill that fails only logs (sandboxes then start slower): this says it did not."""
    filled = warmup_cache.ensure("cpu")
    assert filled is not None
    assert warmup_cache.ready("cpu") == filled
    assert any(filled.iterdir())
