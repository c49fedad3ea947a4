"""Pytree outputs: a returned tree of arrays (nested dicts, lists, tuples, an Optax
state), flattened with paths and compared structure first, then leaf by leaf.

A problem marks an output ``tree = true`` (grader/problems/problem.py). The child flattens
what the learner returns with ``jax.tree_util.tree_flatten_with_path`` and names
each leaf by its path under the output's name (``params/dense_0/kernel``); the
parent holds it as an ``OutputTree`` and compares:

1. the set of leaf paths with the reference's: a missing or unexpected leaf is a
   ``structure`` failure that names it. Only paths count, not container types: a
   tuple where the reference has a list, or a dict where it has a NamedTuple
   with the same field names, is the same answer written differently;
2. each leaf's dtype kind: an integer leaf (a step count) must stay integer, a
   floating one floating;
3. each leaf with the output's tolerance (grader/judging/compare.py).

The first failing leaf is the whole output's failure, and its path (``leaf``) is the one
fact a hidden case reports beyond the kind of mismatch (grader/judging/feedback.py). It is
always a path of the reference's tree, never one the learner's code made up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from grader.judging.compare import Comparison, Failure, compare
from grader.problems.problem import Tolerance


@dataclass(frozen=True)
class OutputTree:
    """A flattened tree: each leaf's path, and the leaf (an array, or why it is not one)."""

    paths: tuple[str, ...]
    leaves: tuple[np.ndarray[Any, Any] | str, ...]

    def arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        return {
            p: leaf
            for p, leaf in zip(self.paths, self.leaves, strict=True)
            if not isinstance(leaf, str)
        }


# One output as the parent holds it: an array, a tree, or (text) why it is neither.
Output = np.ndarray[Any, Any] | OutputTree | str


def leaf_path(output_name: str, path: str) -> str:
    """A leaf's name for people: the output's name, then its path (``params/dense_0/kernel``)."""
    return f"{output_name}/{path}" if path else output_name


def _names(paths: list[str], limit: int = 3) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _structure(actual: OutputTree, desired: OutputTree, name: str) -> Comparison | None:
    missing = [leaf_path(name, p) for p in desired.paths if p not in set(actual.paths)]
    unexpected = [leaf_path(name, p) for p in actual.paths if p not in set(desired.paths)]
    if not missing and not unexpected:
        return None
    parts = []
    if missing:
        parts.append(f"missing {_names(missing)}")
    if unexpected:
        parts.append(f"unexpected {_names(unexpected)}")
    return Comparison(
        False,
        "the returned tree's leaves differ from the expected ones: " + "; ".join(parts),
        Failure.STRUCTURE,
        tolerance_ratio=float("inf"),
        # Only a path of the reference's tree: an unexpected path is text the learner's
        # code chose, maybe from hidden inputs, and a hidden case must not carry it.
        leaf=missing[0] if missing else None,
    )


def _kind_mismatch(actual: np.ndarray[Any, Any], desired: np.ndarray[Any, Any]) -> str | None:
    integer = "iu"
    if (desired.dtype.kind in integer) != (actual.dtype.kind in integer):
        wanted = "an integer" if desired.dtype.kind in integer else "a floating-point"
        return f"{wanted} leaf ({desired.dtype.name}) was expected, got {actual.dtype.name}"
    return None


def compare_tree(
    actual: OutputTree, desired: OutputTree, tolerance: Tolerance, name: str
) -> Comparison:
    mismatch = _structure(actual, desired, name)
    if mismatch:
        return mismatch
    found = dict(zip(actual.paths, actual.leaves, strict=True))
    worst: Comparison | None = None
    for path, want in zip(desired.paths, desired.leaves, strict=True):
        got, shown = found[path], leaf_path(name, path)
        assert not isinstance(want, str), "trusted trees hold arrays only"
        if isinstance(got, str):
            return Comparison(False, got, Failure.INVALID, tolerance_ratio=float("inf"), leaf=shown)
        kind = _kind_mismatch(got, want)
        if kind:
            return Comparison(False, kind, Failure.DTYPE, tolerance_ratio=float("inf"), leaf=shown)
        result = replace(compare(got, want, tolerance), leaf=shown)
        if not result.ok:
            return result
        if worst is None or (result.tolerance_ratio or 0.0) > (worst.tolerance_ratio or 0.0):
            worst = result
    return worst or Comparison(True, "", tolerance_ratio=0.0)


def compare_output(
    actual: Output, desired: Output, tolerance: Tolerance, name: str = "output"
) -> Comparison:
    """Any output against the reference's: arrays with grader.judging.compare, trees leaf by
    leaf. ``name``: the output's, which a tree's leaf paths start with. A tree's
    failure names its leaf in ``leaf``; the reason does not repeat it."""
    if isinstance(actual, str):
        return Comparison(False, actual, Failure.INVALID, tolerance_ratio=float("inf"))
    if isinstance(desired, OutputTree) != isinstance(actual, OutputTree):
        return Comparison(
            False,
            "the output is not the kind of value expected",
            Failure.INVALID,
            tolerance_ratio=float("inf"),
        )
    if isinstance(desired, OutputTree):
        assert isinstance(actual, OutputTree)
        return compare_tree(actual, desired, tolerance, name)
    assert isinstance(actual, np.ndarray) and isinstance(desired, np.ndarray)
    return compare(actual, desired, tolerance)
