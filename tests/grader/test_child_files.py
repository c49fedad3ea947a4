"""The sandbox mounts exactly the grader files the child imports (grader/sandbox.py
CHILD_FILES): one missing and the child cannot start; one extra and a sandbox
sees grader code it has no need of."""

from __future__ import annotations

import ast
from pathlib import Path

from grader.config import PROJECT_ROOT
from grader.sandbox import CHILD_FILES

GRADER = PROJECT_ROOT / "grader"


def grader_imports(path: Path) -> set[str]:
    """Files of the grader package that ``path`` imports (absolute imports only)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grader"):
            parts = node.module.split(".")
            if len(parts) == 1:
                found |= {f"{alias.name}.py" for alias in node.names}
            else:
                found.add(f"{parts[1]}.py")
        elif isinstance(node, ast.Import):
            found |= {
                f"{alias.name.split('.')[1]}.py"
                for alias in node.names
                if alias.name.startswith("grader.")
            }
    return found


def test_the_child_imports_exactly_what_the_sandbox_mounts() -> None:
    needed, todo = {"__init__.py", "child.py"}, ["child.py"]
    while todo:
        for name in grader_imports(GRADER / todo.pop()) - needed:
            needed.add(name)
            todo.append(name)
    assert needed == set(CHILD_FILES)
