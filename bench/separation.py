"""How far each problem's known mistakes sit from passing (not a test).

Runs `jaxjudge check` on every problem (grader/check.py, the same code the CLI and
the test suite run) and records, per problem: its regimes, its known mistakes, how
many of them a requirement rejects, and its weakest separation, the mistake that
comes closest to passing, by its best hidden case on its worst variant, in
tolerances. `check` fails a problem below 10x; the table shows the margin.

    .venv/bin/python -m bench.separation [--write]
"""

from __future__ import annotations

import argparse
import time

from bench.blocks import write_block
from grader.check import check_problem
from grader.config import PROJECT_ROOT
from grader.problems.problem import load_problem, problem_folders

AUTHORING = PROJECT_ROOT / "docs" / "authoring.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    rows: list[str] = []
    mistakes_in_all = 0
    failed: list[str] = []
    weakest_overall: tuple[float, str] | None = None
    for folder in problem_folders():
        problem = load_problem(folder)
        result = check_problem(folder)
        if not result.ok:
            failed.append(problem.slug)
        by_requirement = sum(1 for note in result.notes if "by the problem's requirements" in note)
        mistakes_in_all += len(problem.mistakes)
        if result.weakest is None:
            weakest = "every mistake rejected by a requirement or a non-finite answer"
        else:
            name, separation = result.weakest
            weakest = f"`{name}` at {separation:,.0f}x"
            if weakest_overall is None or separation < weakest_overall[0]:
                weakest_overall = (separation, f"{problem.slug}/{name}")
        rows.append(
            f"| `{problem.slug}` | {len(problem.config.regimes)} | {len(problem.mistakes)}"
            f" | {by_requirement} | {weakest} | {'passes' if result.ok else 'FAILS'} |"
        )
        print(rows[-1], flush=True)
    lines = [
        "| problem | regimes | known mistakes | rejected by a requirement | weakest separation | check |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"{mistakes_in_all} known mistakes in {len(rows)} problems; "
        + (
            f"the weakest of all: `{weakest_overall[1]}` at {weakest_overall[0]:,.0f}x the tolerance; "
            if weakest_overall
            else ""
        )
        + (f"check FAILS on {', '.join(failed)}; " if failed else "check passes on every problem; ")
        + f"measured by `python -m bench.separation` in {time.monotonic() - started:.0f} s.",
    ]
    print("\n".join(lines[-1:]))
    if args.write:
        write_block("separation", lines, AUTHORING)


if __name__ == "__main__":
    main()
