"""Benchmarks write their measured numbers into docs/performance.md, each into its own
marked block, leaving the rest of the page (the prose around the numbers) alone."""

from __future__ import annotations

from grader.config import PROJECT_ROOT

PERFORMANCE = PROJECT_ROOT / "docs" / "performance.md"


def write_block(name: str, lines: list[str]) -> None:
    begin, end = f"<!-- bench:{name} begin -->", f"<!-- bench:{name} end -->"
    text = PERFORMANCE.read_text()
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    before, _, rest = text.partition(begin)
    _, _, after = rest.partition(end)
    PERFORMANCE.write_text(before + begin + "\n" + "\n".join(lines) + "\n" + end + after)
