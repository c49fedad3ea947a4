"""A small problem with two parts, made from `jaxjudge new`'s: ``scale`` (``solve(x,
scale)`` returns ``x * scale``, weight 1) and ``shift`` (``shift(x, by)`` returns ``x +
by``, weight 2), each with a sample and a hidden case and two known mistakes of its own."""

from __future__ import annotations

import re
from pathlib import Path

from grader.problems.scaffold import scaffold

SLUG = "two-parts"

PARTS = """
[[parts]]
name = "scale"
entry_point = "solve"
arguments = ["x", "scale"]
[[parts.outputs]]
name = "result"
description = "float array with the same shape as x"

[[parts]]
name = "shift"
entry_point = "shift"
arguments = ["x", "by"]
weight = 2
[[parts.outputs]]
name = "shifted"
description = "float array with the same shape as x"
"""

CASES = """import numpy as np

from grader.cases import Case


def cases(seed):
    fixed = np.random.default_rng(0)
    yield Case("scale-sample", part="scale", sample=True, args={"x": fixed.normal(size=(3,)).astype(np.float32), "scale": 2.0})
    yield Case("shift-sample", part="shift", sample=True, args={"x": fixed.normal(size=(3,)).astype(np.float32), "by": 1.5})
    fresh = np.random.default_rng([seed, 1])
    yield Case("scale-hidden", part="scale", args={"x": fresh.normal(size=(5, 2)).astype(np.float32), "scale": -float(fresh.uniform(1.0, 4.0))})
    yield Case("shift-hidden", part="shift", args={"x": fresh.normal(size=(4,)).astype(np.float32), "by": float(fresh.uniform(1.0, 4.0))})


def regimes():
    return {
        "negative-scale": lambda args: args.get("scale", 1.0) < 0,
        "two-dimensional": lambda args: args["x"].ndim > 1,
    }
"""

REFERENCE = """def solve(x, scale):
    return x * scale


def shift(x, by):
    return x + by
"""

STARTER = """import jax.numpy as jnp


def solve(x, scale):
    return jnp.zeros_like(x)


def shift(x, by):
    return jnp.zeros_like(x)
"""

# Two mistakes of each part; a mistake defines only the part it gets wrong.
MISTAKES = {
    "adds_scale": '"""You added scale to x; multiply x by it."""\n\n\ndef solve(x, scale):\n    return x + scale\n',
    "returns_input": '"""You returned x unchanged; multiply it by scale."""\n\n\ndef solve(x, scale):\n    return x\n',
    "subtracts": '"""You subtracted by; shift x up by it."""\n\n\ndef shift(x, by):\n    return x - by\n',
    "doubles_by": '"""You shifted by twice the amount."""\n\n\ndef shift(x, by):\n    return x + 2 * by\n',
}


def two_parts(root: Path, *, credit: str = "per-case", wall_seconds: int = 30) -> Path:
    """The problem's folder under ``root`` (its reference beside, as in the bank)."""
    scaffold(SLUG, root)
    folder = root / "problems" / SLUG
    toml = (folder / "problem.toml").read_text()
    toml = re.sub(r'entry_point = "solve"\narguments = .*\n', "", toml)
    toml = re.sub(r"\[\[outputs\]\]\nname = .*\ndescription = .*\n", "", toml)
    toml = toml.replace("wall_seconds = 30", f"wall_seconds = {wall_seconds}")
    (folder / "problem.toml").write_text(f'credit = "{credit}"\n' + toml + PARTS)
    (folder / "cases.py").write_text(CASES)
    (folder / "starter.py").write_text(STARTER)
    (root / "reference_solutions" / f"{SLUG}.py").write_text(REFERENCE)
    for old in (folder / "mistakes").glob("*.py"):
        old.unlink()
    for name, source in MISTAKES.items():
        (folder / "mistakes" / f"{name}.py").write_text(source)
    return folder
