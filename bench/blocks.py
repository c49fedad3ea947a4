"""Benchmarks write their measured numbers into docs/performance.md (or another page of
docs/), each into its own marked block, leaving the rest of the page (the prose around
the numbers) alone."""

from __future__ import annotations

from pathlib import Path

from grader.config import PROJECT_ROOT

PERFORMANCE = PROJECT_ROOT / "docs" / "performance.md"


def write_block(name: str, lines: list[str], page: Path = PERFORMANCE) -> None:
    begin, end = f"<!-- bench:{name} begin -->", f"<!-- bench:{name} end -->"
    text = page.read_text()
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    before, _, rest = text.partition(begin)
    _, _, after = rest.partition(end)
    page.write_text(before + begin + "\n" + "\n".join(lines) + "\n" + end + after)
