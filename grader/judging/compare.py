"""Compare a child's output with the reference output (grading process only).

The order of checks is the point: a real numeric dtype, the exact shape (no
broadcasting, a scalar is shape ``()``), finiteness, then elementwise
``|actual - desired| <= atol + rtol * |desired|`` with the reference as
``desired``. NaN never satisfies a tolerance: a non-finite value is accepted
only where the reference holds the same non-finite value (NaN where NaN, +inf
where +inf).

Reasons never quote expected values; callers add values for sample cases
themselves. For hidden cases only ``failure``, the kind of mismatch, is
shown (grader/judging/feedback.py): the error's size would reveal the expected value.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from grader.problems.problem import Tolerance

NUMERIC_KINDS = frozenset("iuf")


class Failure(StrEnum):
    """What kind of mismatch a wrong output is (all a hidden case may say)."""

    INVALID = "invalid"  # not an array at all (None, text, an unconvertible object)
    DTYPE = "dtype"
    SHAPE = "shape"
    NOT_FINITE = "not_finite"
    TOLERANCE = "tolerance"
    STRUCTURE = "structure"  # a tree output's leaves are not the expected ones


@dataclass(frozen=True)
class Comparison:
    ok: bool
    reason: str
    failure: Failure | None = None
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    # max over elements of |actual - desired| / (atol + rtol * |desired|):
    # below 1 passes; "how many tolerances away" the answer is.
    tolerance_ratio: float | None = None
    worst_index: tuple[int, ...] | None = None
    expected_shape: str | None = None
    actual_shape: str | None = None
    leaf: str | None = None  # a tree output's failing (or worst) leaf, by path


def format_shape(shape: tuple[int, ...]) -> str:
    return (
        "()"
        if not shape
        else "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    )


def _dtype_problem(actual: np.ndarray[Any, Any]) -> str | None:
    kind = actual.dtype.kind
    if kind == "b":
        return "the output is boolean; a numeric array was expected"
    if kind == "c":
        return "the output is complex; a real numeric array was expected"
    if kind not in NUMERIC_KINDS:
        return f"the output has dtype {actual.dtype.name}; a real numeric array was expected"
    return None


def _non_finite_problem(actual: np.ndarray[Any, Any], desired: np.ndarray[Any, Any]) -> str | None:
    desired_finite = np.isfinite(desired)
    # Where the reference is finite, the output must be finite too.
    bad = ~np.isfinite(actual) & desired_finite
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        what = "NaN" if np.isnan(actual[index]) else "an infinity"
        return f"the output has {what} at index {index} where a finite value was expected"
    # Where the reference is not finite, the output must hold the same value.
    special = ~desired_finite
    same = (np.isnan(actual) & np.isnan(desired)) | (actual == desired)
    mismatch = special & ~same
    if mismatch.any():
        index = tuple(int(i) for i in np.argwhere(mismatch)[0])
        return f"the output at index {index} differs from the expected non-finite value"
    return None


def compare(
    actual: np.ndarray[Any, Any], desired: np.ndarray[Any, Any], tolerance: Tolerance
) -> Comparison:
    problem = _dtype_problem(actual)
    if problem:
        return Comparison(False, problem, Failure.DTYPE)
    want, got = format_shape(desired.shape), format_shape(actual.shape)
    if actual.shape != desired.shape:
        return Comparison(
            False,
            f"expected shape {want}, got {got}",
            Failure.SHAPE,
            expected_shape=want,
            actual_shape=got,
        )
    a = actual.astype(np.float64)
    d = desired.astype(np.float64)
    problem = _non_finite_problem(a, d)
    if problem:
        return Comparison(
            False,
            problem,
            Failure.NOT_FINITE,
            tolerance_ratio=float("inf"),
            expected_shape=want,
            actual_shape=got,
        )
    if a.size == 0:
        return Comparison(True, "", None, 0.0, 0.0, 0.0, expected_shape=want, actual_shape=got)
    # Non-finite positions already matched exactly above; zero them out so the
    # arithmetic below never sees inf - inf.
    finite = np.isfinite(d)
    a, d = np.where(finite, a, 0.0), np.where(finite, d, 0.0)
    with np.errstate(over="ignore"):  # two huge float64s of opposite signs
        error = np.abs(a - d)
    allowed = tolerance.atol + tolerance.rtol * np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = np.where(error == 0.0, 0.0, error / allowed)
        relative = np.where(error == 0.0, 0.0, error / np.abs(d))
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(ratio)), ratio.shape))
    max_ratio = float(ratio[worst])
    ok = bool((error <= allowed).all())
    reason = ""
    if not ok:
        reason = (
            f"max abs error {float(error.max()):.4g} (relative {float(relative.max()):.3g}) at index {worst}:"
            f" {max_ratio:.3g}x the tolerance ({tolerance.describe()})"
        )
    return Comparison(
        ok,
        reason,
        None if ok else Failure.TOLERANCE,
        max_abs_error=float(error.max()),
        max_rel_error=float(relative.max()),
        tolerance_ratio=max_ratio,
        worst_index=worst,
        expected_shape=want,
        actual_shape=got,
    )
