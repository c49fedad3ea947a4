"""The child's conversion of returned values to wire arrays, dtype by dtype (in this
process: no child is started)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.child import to_array
from grader.verdicts import Verdict

LIMIT = 1000


@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (np.arange(3, dtype=np.float32), "float32"),
        (np.arange(3, dtype=np.float64), "float64"),
        (np.arange(3, dtype=np.int32), "int32"),
        (np.arange(3, dtype=np.int64), "int64"),
        (np.array([True, False]), "bool"),
        (jnp.arange(3, dtype=jnp.bfloat16), "float32"),  # bfloat16 travels as float32
        (jnp.arange(3, dtype=jnp.float16), "float16"),
        (jnp.arange(3.0), "float32"),  # a jax.Array comes back to the host
        (2.5, "float64"),
        (7, "int64"),
        ([1.0, 2.0], "float64"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_numeric_values_become_plain_arrays(value: Any, dtype: str) -> None:
    converted = to_array(value, LIMIT, jax)
    assert converted.refusal is None, converted.message
    assert converted.array is not None
    assert type(converted.array) is np.ndarray
    assert converted.array.dtype.name == dtype
    np.testing.assert_allclose(converted.array.astype(np.float64), np.asarray(value, np.float64))


def test_bfloat16_values_survive_the_conversion_exactly() -> None:
    value = jnp.array([1.5, -2.25, 3.0e30], dtype=jnp.bfloat16)
    converted = to_array(value, LIMIT, jax)
    assert converted.array is not None
    assert converted.array.tolist() == [1.5, -2.25, float(np.float32(value[2]))]


def test_complex_values_travel_as_they_are_for_the_comparator_to_judge() -> None:
    converted = to_array(np.array([1 + 2j]), LIMIT, jax)
    assert converted.array is not None and converted.array.dtype.name == "complex128"


class Subclass(np.ndarray):
    pass


def test_an_ndarray_subclass_becomes_a_plain_ndarray() -> None:
    value = np.arange(3.0).view(Subclass)
    converted = to_array(value, LIMIT, jax)
    assert type(converted.array) is np.ndarray


@pytest.mark.parametrize(
    ("value", "refusal", "phrase"),
    [
        (None, Verdict.WRONG_ANSWER, "returned None"),
        ("text", Verdict.WRONG_ANSWER, "not a numeric array"),
        (np.array(["a", "b"]), Verdict.WRONG_ANSWER, "not a numeric array"),
        ({"a": 1}, Verdict.WRONG_ANSWER, "not a numeric array"),
        (np.zeros(LIMIT + 1), Verdict.OUTPUT_LIMIT_EXCEEDED, "too large: 1001 elements"),
    ],
    ids=["none", "str", "unicode-array", "dict", "too-large"],
)
def test_what_cannot_travel_is_refused_with_its_verdict(
    value: Any, refusal: Verdict, phrase: str
) -> None:
    converted = to_array(value, LIMIT, jax)
    assert converted.array is None
    assert converted.refusal is refusal
    assert phrase in converted.message


def test_a_value_whose_conversion_raises_is_refused_not_raised() -> None:
    class Hostile:
        def __array__(self, *_args: object, **_kwargs: object) -> np.ndarray:
            raise RuntimeError("no")

    converted = to_array(Hostile(), LIMIT, jax)
    assert converted.refusal is Verdict.WRONG_ANSWER
    assert "could not be converted" in converted.message


def loaded(source: str, *, name: str = "f") -> Any:
    from grader.child import EAGER_NAMES, _Loaded, _uses_any

    code = compile(source, "submission.py", "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return _Loaded(0, "submission.py", namespace[name], compiled=not _uses_any(code, EAGER_NAMES))


def test_a_traceable_solution_is_compiled_once_per_static_signature() -> None:
    solution = loaded("def f(seed, x, lr):\n    return x * int(seed) * lr\n")
    x = jnp.arange(3.0)
    first = solution.call([2.0, x, 0.5], jax)
    again = solution.call([2.0, x + 1, 0.25], jax)  # same static seed: the same program
    assert solution.compiled and list(solution.jitted) == [(0,)]
    assert first.tolist() == [0.0, 1.0, 2.0] and again.tolist() == [0.5, 1.0, 1.5]


def test_python_that_needs_concrete_values_falls_back_to_eager_for_good() -> None:
    solution = loaded("def f(x, lr):\n    return x * 2 if float(lr) > 0.3 else x\n")
    x = jnp.arange(3.0)
    assert solution.call([x, 0.5], jax).tolist() == [0.0, 2.0, 4.0]  # lr is traced: float() fails
    assert not solution.compiled
    assert solution.call([x, 0.1], jax).tolist() == [0.0, 1.0, 2.0]


def test_an_error_is_the_eager_error_with_its_own_message() -> None:
    solution = loaded("def f(x):\n    raise ValueError('my bug')\n")
    with pytest.raises(ValueError, match="my bug"):
        solution.call([jnp.arange(3.0)], jax)
    assert not solution.compiled


def test_code_that_prints_runs_eagerly_so_prints_show_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    solution = loaded(
        "def helper(x):\n    print('sum', float(x.sum()))\n    return x\n"
        "def f(x):\n    return helper(x) + 1\n"
    )
    assert not solution.compiled  # print is named in a nested function
    assert solution.call([jnp.arange(3.0)], jax).tolist() == [1.0, 2.0, 3.0]
    assert capsys.readouterr().out == "sum 3.0\n"
