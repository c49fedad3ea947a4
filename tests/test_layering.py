"""The dependencies go one way: the web app uses the grader, never the reverse
(docs/architecture.md). Checked on the source, not at run time."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.config import PROJECT_ROOT


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_the_grader_imports_nothing_of_the_web_app() -> None:
    offenders = {
        str(path.relative_to(PROJECT_ROOT)): sorted(
            m for m in imported_modules(path) if m.split(".")[0] == "app"
        )
        for path in sorted((PROJECT_ROOT / "grader").rglob("*.py"))
    }
    assert {name: mods for name, mods in offenders.items() if mods} == {}
