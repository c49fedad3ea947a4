"""The dependencies go one way, as docs/architecture.md states them: the grader never
imports the web app, and inside each package a unit (a subpackage or a top-level module)
imports only units on lower lines of that package's layer list in the docs. The lists
are read from the docs, so the docs cannot drift from the code. Checked on the source
(every import statement, lazy ones included), not at run time."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grader.config import PROJECT_ROOT

ARCHITECTURE = PROJECT_ROOT / "docs" / "architecture.md"


def imported_modules(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module is not None, "a relative import"
            found.add(node.module)
            # `from app import api` imports the module app.api
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def documented_layers(package: str) -> list[set[str]]:
    """The ```text block after `<!-- layers: PACKAGE -->`: one layer per line, lowest first."""
    match = re.search(
        rf"<!-- layers: {package} -->\s*```text\n(.*?)```", ARCHITECTURE.read_text(), re.S
    )
    assert match, f"docs/architecture.md states no layers for {package}/"
    return [set(line.split()) for line in match.group(1).splitlines() if line.strip()]


def units(package: str) -> dict[str, list[Path]]:
    """Each unit of a package (``app.core``, ``app.server.main``) with its source files."""
    found: dict[str, list[Path]] = {}
    for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
        parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
        if parts[1:] == ("__init__",):
            continue
        found.setdefault(f"{parts[0]}.{parts[1]}", []).append(path)
    return found


def upward_imports(unit: str, source: str, level: dict[str, int]) -> list[str]:
    """What ``source`` (a module of ``unit``) imports from its own layer or above."""
    found = []
    for module in sorted(imported_modules(source)):
        target = ".".join(module.split(".")[:2])
        if target in level and target != unit and level[target] >= level[unit]:
            found.append(module)
    return found


@pytest.mark.parametrize("package", ["app", "grader"])
def test_every_unit_is_on_exactly_one_documented_layer(package: str) -> None:
    layers = documented_layers(package)
    listed = [unit for layer in layers for unit in layer]
    assert sorted(listed) == sorted(set(listed)), "a unit is listed twice"
    assert set(listed) == set(units(package))


@pytest.mark.parametrize("package", ["app", "grader"])
def test_each_unit_imports_only_lower_layers(package: str) -> None:
    layers = documented_layers(package)
    level = {unit: index for index, layer in enumerate(layers) for unit in layer}
    offenders = [
        f"{path.relative_to(PROJECT_ROOT)} imports {module}"
        for unit, paths in units(package).items()
        for path in paths
        for module in upward_imports(unit, path.read_text(), level)
    ]
    assert offenders == []


def test_the_grader_imports_nothing_of_the_web_app() -> None:
    offenders = {
        str(path.relative_to(PROJECT_ROOT)): sorted(
            m for m in imported_modules(path.read_text()) if m.split(".")[0] == "app"
        )
        for path in sorted((PROJECT_ROOT / "grader").rglob("*.py"))
    }
    assert {name: mods for name, mods in offenders.items() if mods} == {}


def test_an_upward_import_is_found_even_inside_a_function() -> None:
    level = {"app.core": 1, "app.data": 2, "app.web": 3}
    lazy = "import json\n\ndef f():\n    from app import web\n    from app.data import accounts\n"
    assert upward_imports("app.core", lazy, level) == ["app.data", "app.data.accounts", "app.web"]
    assert upward_imports("app.web", lazy, level) == []
    assert upward_imports("app.data", "from app.data import courses\n", level) == []
