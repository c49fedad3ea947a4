"""`jaxjudge new SLUG`: a problem folder that `check` explains how to complete."""

from __future__ import annotations

from pathlib import Path

from grader.errors import UsageError
from grader.problems.problem import SLUG
from grader.problems.source import ProblemSource

TODO = "TODO(jaxjudge new)"

FILES: dict[str, str] = {
    "problem.toml": f"""# {TODO}: describe the problem. Every field is documented in docs/authoring.md.
title = "{{title}}"
track = "my-track"
position = 1
difficulty = "easy"
estimated_minutes = 10
tags = []
entry_point = "solve"
arguments = ["x", "scale"]
device = "any"

[[outputs]]
name = "result"
description = "float array with the same shape as x"

# The kinds of input the statement promises hidden cases of; cases.py regimes() says
# which cases are in each, and `check` fails when a variant has none.
[[regimes]]
name = "negative-scale"
promise = "a negative scale"

[[regimes]]
name = "two-dimensional"
promise = "inputs with more than one dimension"

[tolerance]
rtol = 1e-5
atol = 1e-6

[limits]
cpu_seconds = 10
wall_seconds = 30
memory_mb = 2048
""",
    "statement.md": f"""# {{title}}

{TODO}: explain the task. Write `solve(x, scale)` that returns `x * scale`.
""",
    "starter.py": """import jax.numpy as jnp


def solve(x, scale):
    # Your code here.
    return jnp.zeros_like(x)
""",
    "hints.md": f"""## First hint

{TODO}: each `## ` heading starts one hint; learners reveal them in order.
""",
    "solution.md": f"""# Walkthrough

{TODO}: explain the reference solution; learners see this after solving.
""",
    "cases.py": '''"""Cases: scalars as Python floats, arrays as float32.

jaxjudge calls cases(seed) once per variant (seed = 0, 1, ...): samples stay
the same for every seed, hidden cases keep their names and shapes and draw
fresh values from the seed, so each submission meets different hidden inputs.
"""

import numpy as np

from grader.cases import Case


def cases(seed):
    fixed = np.random.default_rng(0)
    yield Case("sample", sample=True, args={"x": fixed.normal(size=(3,)).astype(np.float32), "scale": 2.0})
    fresh = np.random.default_rng([seed, 1])
    yield Case("hidden-1", args={"x": fresh.normal(size=(5, 2)).astype(np.float32), "scale": -3.0})


def regimes():
    """Each regime problem.toml promises, as a predicate on a case's arguments."""
    return {
        "negative-scale": lambda args: args["scale"] < 0,
        "two-dimensional": lambda args: args["x"].ndim > 1,
    }
''',
    "mistakes/returns_input.py": '''"""You returned x unchanged; multiply it by scale."""


def solve(x, scale):
    return x
''',
}

REFERENCE = '''"""Reference solution (never shown to learners)."""


def solve(x, scale):
    return x * scale
'''


def scaffold(slug: str, content_dir: Path) -> list[Path]:
    """Both places of a new problem under ``content_dir``: its folder and its reference."""
    if not SLUG.match(slug):
        raise UsageError(f"{slug!r} is not a valid slug: use lowercase words joined by hyphens")
    source = ProblemSource(content_dir, slug)
    folder, reference = source.folder, source.reference
    if folder.exists() or reference.exists():
        raise UsageError(
            f"{folder if folder.exists() else reference} already exists; choose another slug"
        )
    title = slug.replace("-", " ").capitalize()
    created = []
    for name, text in FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{title}", title))
        created.append(path)
    reference.parent.mkdir(parents=True, exist_ok=True)
    reference.write_text(REFERENCE)
    created.append(reference)
    return created


def leftover_todos(folder: Path) -> list[str]:
    """Files of a scaffolded problem that still hold the scaffold's TODO marker."""
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and TODO in path.read_text()
    )
