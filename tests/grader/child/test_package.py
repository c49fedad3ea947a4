"""The sandbox's code is one package, grader/child/: the sandbox mounts that folder
and nothing else of the project, so the package may import only itself, the standard
library and the runtime it drives (numpy and the JAX stack)."""

from __future__ import annotations

import sys
from pathlib import Path

from grader.config import PROJECT_ROOT
from grader.running.sandbox import CHILD_PACKAGE, JUDGE_DIR, bwrap_arguments
from tests.test_layering import imported_modules

RUNTIME = {"numpy", "jax", "jaxlib", "flax", "optax"}


def test_the_child_package_imports_only_itself_the_standard_library_and_the_runtime() -> None:
    modules = sorted(CHILD_PACKAGE.glob("*.py"))
    assert {path.name for path in modules} >= {"run.py", "protocol.py", "verdicts.py", "warmup.py"}
    outside = {
        f"{path.name}: {name}"
        for path in modules
        for name in imported_modules(path.read_text())
        if not name.startswith("grader.child")
        and name.split(".")[0] not in sys.stdlib_module_names | RUNTIME
    }
    assert outside == set()


def test_the_sandbox_mounts_that_folder_and_no_other_project_path() -> None:
    args = bwrap_arguments(device="cpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    sources = [args[i + 1] for i, arg in enumerate(args) if arg in ("--ro-bind", "--bind")]
    project = [s for s in sources if Path(s).resolve().is_relative_to(PROJECT_ROOT.resolve())]
    assert CHILD_PACKAGE == PROJECT_ROOT / "grader" / "child"
    runtime = (str(PROJECT_ROOT / "var"), sys.prefix)  # the warm-up cache, a virtualenv here
    assert [s for s in project if not s.startswith(runtime)] == [str(CHILD_PACKAGE)]
    assert args[args.index(str(CHILD_PACKAGE)) + 1] == f"{JUDGE_DIR}/grader/child"
