"""The documentation's module map matches the tree: every module is named in
docs/architecture.md by its full path, every source path the docs or a module names
exists, and so does every file or folder the docs and the READMEs name.
(tests/test_layering.py holds the code to the docs' layer lists.)"""

from __future__ import annotations

import re

from grader.config import PROJECT_ROOT

ARCHITECTURE = (PROJECT_ROOT / "docs" / "architecture.md").read_text()
DOCS = [*(PROJECT_ROOT / "docs").glob("*.md"), PROJECT_ROOT / "README.md"]


def modules() -> list[str]:
    found = []
    for package in ("app", "grader"):
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            if path.name != "__init__.py":
                found.append(str(path.relative_to(PROJECT_ROOT)))
    return found


def test_every_module_is_on_the_map_by_its_full_path() -> None:
    missing = [path for path in modules() if f"`{path}`" not in ARCHITECTURE]
    assert missing == []


def test_the_map_names_no_module_that_is_gone() -> None:
    mapped = set(re.findall(r"`((?:app|grader)/[\w/]+\.py)`", ARCHITECTURE))
    assert sorted(mapped - set(modules())) == []


def test_every_source_path_the_docs_and_docstrings_name_exists() -> None:
    named = set()
    sources = [PROJECT_ROOT / path for path in modules()]
    for doc in DOCS + sources:
        named |= set(re.findall(r"\b((?:app|grader|tests)/[\w/]+\.py)\b", doc.read_text()))
    assert named, "the docs name no source file at all"
    assert sorted(path for path in named if not (PROJECT_ROOT / path).is_file()) == []


# A path in the repository: one of its top-level folders, then a file with its extension
# or a folder with its slash. Not after a slash (URLs, /static/...), not a placeholder
# (`test_<module>.py`), not a Kubernetes name (deploy/jaxjudge-web).
TOP_LEVEL = (
    "app|grader|tests|bench|clients|deploy|docs|migrations|problems|reference_solutions"
    "|static|templates|web"
)
PROJECT_PATH = re.compile(
    rf"(?<![\w/.-])((?:{TOP_LEVEL})/(?:[\w.-]+/)*(?:[\w-]+(?:\.\w+)+)?)(?![\w/-])"
)
READMES = sorted(PROJECT_ROOT.glob("*/README.md")) + sorted(PROJECT_ROOT.glob("tests/*/README.md"))
EXAMPLE = "my-problem"  # the authoring guide's example problem, which no checkout holds


def test_every_project_path_the_docs_and_readmes_name_exists() -> None:
    """Folders and files of any kind (templates, scripts, deploy files), not only modules:
    a renamed file leaves no stale path in a guide."""
    named = {path for doc in DOCS + READMES for path in PROJECT_PATH.findall(doc.read_text())}
    assert len(named) > 100, "the pattern stopped finding the docs' paths"
    stale = sorted(p for p in named if EXAMPLE not in p and not (PROJECT_ROOT / p).exists())
    assert stale == []


def test_the_readme_and_the_authoring_guide_list_every_problem() -> None:
    slugs = {path.name for path in (PROJECT_ROOT / "problems").iterdir() if path.is_dir()}
    for doc in ("README.md", "docs/authoring.md"):
        listed = set(
            re.findall(r"^\|[^|\n]*\| `([a-z0-9-]+)` \|", (PROJECT_ROOT / doc).read_text(), re.M)
        )
        assert listed == slugs, doc
