"""`jaxjudge new SLUG` and the course editor's new problem: a small, complete problem
that passes `jaxjudge check` as it stands, with a ``TODO(jaxjudge new)`` marker in each
place an author changes (`check` lists the markers left; they do not fail it)."""

from __future__ import annotations

from pathlib import Path

from grader.errors import UsageError
from grader.problems.problem import SLUG
from grader.problems.source import PROBLEMS, REFERENCES, ProblemSource

TODO = "TODO(jaxjudge new)"

FILES: dict[str, str] = {
    "problem.toml": f"""# {TODO}: describe your problem. Every field is documented in docs/authoring.md.
title = "{{title}}"
track = "my-track"  # {TODO}: the series of problems it belongs to (lowercase words and hyphens)
position = 1
difficulty = "easy"
estimated_minutes = 10
tags = []
entry_point = "solve"
arguments = ["x", "scale"]  # {TODO}: the arguments learners' function takes, in order
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

# {TODO}: `check` fails when a mistake sits less than 10x this tolerance from the reference.
[tolerance]
rtol = 1e-5
atol = 1e-6

# The least a submission gets; `check` calibrates the CPU time on the reference.
[limits]
cpu_seconds = 10
wall_seconds = 30
memory_mb = 2048
""",
    "statement.md": f"""# {{title}}

{TODO}: explain the task as learners will read it (Markdown, $math$).

Write `solve(x, scale)` that returns $x \\cdot \\text{{scale}}$, an array with the shape of `x`.
The hidden cases include a negative scale and inputs with more than one dimension.
""",
    "starter.py": f"""# {TODO}: the code learners start from; `check` fails if it is accepted as it is.
import jax.numpy as jnp


def solve(x, scale):
    # Your code here.
    return jnp.zeros_like(x)
""",
    "hints.md": f"""{TODO}: each `## ` heading starts one hint; learners reveal them in order.

## Multiply

Multiplying an array by a number scales every element: `x * scale`.
""",
    "solution.md": f"""{TODO}: explain the reference solution; learners see it after solving.

# Walkthrough

`x * scale` multiplies every element of `x` by `scale` and keeps the shape of `x`.
""",
    "cases.py": f'''"""Cases: scalars as Python floats, arrays as float32.

jaxjudge calls cases(seed) once per variant (seed = 0, 1, ...): samples stay
the same for every seed, hidden cases keep their names and shapes and draw
fresh values from the seed, so each submission meets different hidden inputs.
"""

import numpy as np

from grader.cases import Case


# {TODO}: the inputs of your problem; name each case and keep names and shapes per seed.
def cases(seed):
    fixed = np.random.default_rng(0)
    yield Case("sample", sample=True, args={{"x": fixed.normal(size=(3,)).astype(np.float32), "scale": 2.0}})
    fresh = np.random.default_rng([seed, 1])
    scale = -float(fresh.uniform(1.0, 4.0))
    yield Case("hidden-1", args={{"x": fresh.normal(size=(5, 2)).astype(np.float32), "scale": scale}})


def regimes():
    """Each regime problem.toml promises, as a predicate on a case's arguments."""
    # {TODO}: one predicate per [[regimes]] of problem.toml.
    return {{
        "negative-scale": lambda args: args["scale"] < 0,
        "two-dimensional": lambda args: args["x"].ndim > 1,
    }}
''',
    "mistakes/returns_input.py": f'''"""You returned x unchanged; multiply it by scale."""

# {TODO}: each file is one wrong solution a learner would write; its docstring's first
# line is the diagnosis they read when their submission behaves like it.


def solve(x, scale):
    return x
''',
    "mistakes/adds_scale.py": '''"""You added scale to x; the task multiplies x by it."""


def solve(x, scale):
    return x + scale
''',
    "mistakes/ignores_sign.py": '''"""You used the size of scale and lost its sign; a negative scale flips the result."""


def solve(x, scale):
    return x * abs(scale)
''',
    "mistakes/flattens.py": '''"""You flattened the result; keep the shape of x."""


def solve(x, scale):
    return (x * scale).ravel()
''',
}

REFERENCE = f'''"""Reference solution (never shown to learners before they solve the problem)."""

# {TODO}: your reference; `check` proves it reproducible and accepted as a submission.


def solve(x, scale):
    return x * scale
'''


def _valid(slug: str) -> None:
    if not SLUG.match(slug):
        raise UsageError(f"{slug!r} is not a valid slug: use lowercase words joined by hyphens")


def scaffold_files(slug: str) -> dict[str, bytes]:
    """A new problem's snapshot files by their path under the root (``problems/<slug>/...``
    and ``reference_solutions/<slug>.py``, as ``ProblemSource.files()`` gives them)."""
    _valid(slug)
    title = slug.replace("-", " ").capitalize()
    files = {
        f"{PROBLEMS}/{slug}/{name}": text.replace("{title}", title).encode()
        for name, text in FILES.items()
    }
    files[f"{REFERENCES}/{slug}.py"] = REFERENCE.encode()
    return files


def scaffold(slug: str, content_dir: Path) -> list[Path]:
    """Both places of a new problem under ``content_dir``: its folder and its reference."""
    _valid(slug)
    source = ProblemSource(content_dir, slug)
    folder, reference = source.folder, source.reference
    if folder.exists() or reference.exists():
        raise UsageError(
            f"{folder if folder.exists() else reference} already exists; choose another slug"
        )
    created = []
    for name, data in scaffold_files(slug).items():
        path = content_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        created.append(path)
    return created


def leftover_todos(source: ProblemSource) -> list[str]:
    """Where a scaffolded problem still holds the scaffold's TODO marker: ``file:line``
    for each (the folder's files, then the reference)."""
    paths = sorted(p for p in source.folder.rglob("*") if p.is_file() and p.suffix != ".pyc")
    found = []
    for path in [*paths, source.reference]:
        try:
            lines = path.read_text().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        name = (
            f"{REFERENCES}/{source.slug}.py"
            if path == source.reference
            else path.relative_to(source.folder).as_posix()
        )
        found += [f"{name}:{number}" for number, line in enumerate(lines, 1) if TODO in line]
    return found
