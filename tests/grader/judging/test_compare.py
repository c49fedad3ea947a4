from __future__ import annotations

import math

import numpy as np
import pytest

from grader.judging.compare import compare, format_shape
from grader.problems.problem import Tolerance

TOL = Tolerance(rtol=1e-4, atol=1e-6)


def arr(*values: float, dtype: str = "float32") -> np.ndarray:
    return np.array(values, dtype=dtype)


@pytest.mark.parametrize(
    ("actual", "desired", "ok"),
    [
        (arr(1.0), arr(1.0), True),
        (arr(1.0 + 0.9e-4), arr(1.0), True),  # inside atol + rtol*|d|
        (arr(1.0 + 1.2e-4), arr(1.0), False),  # just outside
        (arr(0.9e-6), arr(0.0), True),  # atol alone at zero
        (arr(2e-6), arr(0.0), False),
        (np.array(3.0), np.array(3.0), True),  # scalars, shape ()
        (arr(1.0, dtype="float64"), arr(1.0), True),  # float64 vs float32: value compared
        (np.array([2], dtype=np.int32), arr(2.0), True),  # integers are numbers
    ],
)
def test_tolerance_edges(actual: np.ndarray, desired: np.ndarray, ok: bool) -> None:
    assert compare(actual, desired, TOL).ok is ok


def test_tolerance_is_relative_to_the_reference_not_the_answer() -> None:
    # |a - d| = 1 with d = 10_000 passes rtol 1e-4; the swapped pair does not.
    assert compare(arr(10_001.0), arr(10_000.0), Tolerance(1e-4, 0.0)).ok
    assert not compare(arr(10_000.0), arr(1.0), Tolerance(1e-4, 0.0)).ok


@pytest.mark.parametrize(
    ("actual", "desired", "phrase"),
    [
        (arr(1.0, 1.0), arr(1.0), "expected shape (1,), got (2,)"),  # no broadcasting
        (np.array(1.0), arr(1.0), "expected shape (1,), got ()"),
        (arr(1.0), np.array(1.0), "expected shape (), got (1,)"),
        (
            np.zeros((0,), np.float32),
            np.array(1.0),
            "expected shape (), got (0,)",
        ),  # empty vs scalar
        (np.ones((1000,), np.float32), arr(1.0), "got (1000,)"),
        (np.ones((3, 1), np.float32), np.ones((3,), np.float32), "expected shape (3,), got (3, 1)"),
    ],
)
def test_shapes_must_match_exactly(actual: np.ndarray, desired: np.ndarray, phrase: str) -> None:
    result = compare(actual, desired, TOL)
    assert not result.ok
    assert phrase in result.reason


@pytest.mark.parametrize(
    ("actual", "phrase"),
    [
        (np.array([True]), "boolean"),
        (np.array([1 + 0j], dtype=np.complex64), "complex"),
        (np.array(["1.0"]), "dtype str"),
    ],
)
def test_non_real_dtypes_are_rejected(actual: np.ndarray, phrase: str) -> None:
    result = compare(actual, arr(1.0), TOL)
    assert not result.ok
    assert phrase in result.reason


@pytest.mark.parametrize(
    ("actual", "desired", "ok"),
    [
        (arr(math.nan), arr(1.0), False),  # NaN never satisfies a tolerance
        (arr(math.inf), arr(1.0), False),
        (arr(1.0), arr(math.nan), False),  # reference NaN demands NaN
        (arr(math.nan), arr(math.nan), True),
        (arr(math.inf), arr(math.inf), True),
        (arr(-math.inf), arr(math.inf), False),
        (arr(math.nan, 1.0), arr(math.nan, 1.0), True),
        (arr(math.nan, 2.0), arr(math.nan, 1.0), False),  # finite part still compared
    ],
)
def test_non_finite_values(actual: np.ndarray, desired: np.ndarray, ok: bool) -> None:
    assert compare(actual, desired, TOL).ok is ok


def test_nan_message_names_the_index() -> None:
    result = compare(arr(1.0, math.nan), arr(1.0, 2.0), TOL)
    assert "NaN at index (1,)" in result.reason


def test_empty_arrays_of_equal_shape_are_equal() -> None:
    result = compare(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), TOL)
    assert result.ok
    assert result.max_abs_error == 0.0


def test_errors_and_ratio_are_reported_without_expected_values() -> None:
    result = compare(arr(1.0, 2.5), arr(1.0, 2.0), TOL)
    assert not result.ok
    assert result.max_abs_error == pytest.approx(0.5)
    assert result.max_rel_error == pytest.approx(0.25)
    assert result.worst_index == (1,)
    assert result.tolerance_ratio == pytest.approx(0.5 / (1e-6 + 2e-4))
    assert "2.0" not in result.reason.replace(
        "2.0e", ""
    )  # the expected value itself is never quoted


def test_zero_tolerance_with_exact_zero() -> None:
    assert compare(arr(0.0), arr(0.0), Tolerance(0.0, 0.0)).ok


@pytest.mark.parametrize(("shape", "text"), [((), "()"), ((1,), "(1,)"), ((2, 3), "(2, 3)")])
def test_format_shape(shape: tuple[int, ...], text: str) -> None:
    assert format_shape(shape) == text


def test_shown_values_are_strict_json() -> None:
    import json

    from grader.judging.report import shown_values

    assert (
        json.dumps(shown_values(arr(math.nan, math.inf, 1.0)), allow_nan=False)
        == '["nan", "inf", 1.0]'
    )
    assert "complex64" in shown_values(np.array([1 + 1j], dtype=np.complex64))
    assert shown_values(np.array([True])) == "bool(1,) [ True]"
