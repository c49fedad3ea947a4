"""The child's conversion of returned values to wire arrays, dtype by dtype (in this
process: no child is started)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader.child.protocol import JobMessage, Kind
from grader.child.run import to_array
from grader.child.verdicts import Verdict

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
        (np.zeros(LIMIT + 1), Verdict.OUTPUT_LIMIT_EXCEEDED, "too large: shape (1001,)"),
        # Empty, but its other dimensions would carry two numbers the code chose.
        (np.zeros((0, 40, 30)), Verdict.OUTPUT_LIMIT_EXCEEDED, "too large: shape (0, 40, 30)"),
    ],
    ids=["none", "str", "unicode-array", "dict", "too-large", "empty-but-wide"],
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


class Frames:
    """A stand-in for the child's result channel: the frames it would send."""

    def __init__(self) -> None:
        self.sent: list[tuple[Kind, dict[str, Any]]] = []

    def send(self, kind: Kind, meta: dict[str, Any], data: bytes = b"") -> None:
        self.sent.append((kind, meta))

    def analyses(self) -> list[dict[str, Any]]:
        return [meta for kind, meta in self.sent if kind is Kind.ANALYSIS]


def job(*, analysed: bool = False) -> JobMessage:
    return JobMessage("f", 1, LIMIT, LIMIT, 10, None, (), (), analysed=analysed, compiled=True)


def loaded(source: str, *, name: str = "f") -> Any:
    from grader.child import run as child

    child._TOOLS.update(child._analysis_tools(jax))
    code = compile(source, "submission.py", "exec")
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return child._Loaded(
        0, "submission.py", namespace[name], compiled=not child._uses_any(code, child.EAGER_NAMES)
    )


def call(solution: Any, args: list[Any], frames: Frames, *, analysed: bool = False) -> Any:
    value, _program = solution.call(args, job(analysed=analysed), frames, compile_it=True)
    return value


def test_a_traceable_solution_is_compiled_once_per_static_signature() -> None:
    solution = loaded("def f(seed, x, lr):\n    return x * int(seed) * lr\n")
    x, frames = jnp.arange(3.0), Frames()
    first = call(solution, [2.0, x, 0.5], frames)
    again = call(solution, [2.0, x + 1, 0.25], frames)  # same static seed: the same program
    assert solution.compiled and len(solution.programs) == 1
    assert first.tolist() == [0.0, 1.0, 2.0] and again.tolist() == [0.5, 1.0, 1.5]
    call(solution, [3.0, x, 0.5], frames)  # another static value: another program
    call(solution, [2.0, jnp.arange(4.0), 0.5], frames)  # another shape: another program
    assert len(solution.programs) == 3 and frames.analyses() == []  # not analysed: no frames


def test_each_program_is_announced_once_with_what_it_is_made_of() -> None:
    solution = loaded(
        "import jax\n"
        "def f(x):\n"
        "    total, _ = jax.lax.scan(lambda c, v: (c + v, None), 0.0, x)\n"
        "    return total\n"
    )
    frames = Frames()
    numbers = [
        solution.call([v], job(analysed=True), frames, compile_it=True)[1]
        for v in (jnp.arange(3.0), jnp.ones(3), jnp.arange(5.0))
    ]
    assert numbers == [0, 0, 1]
    announced = frames.analyses()
    assert [a["program"] for a in announced] == [0, 1]
    counts = dict(announced[0]["primitives"])
    assert counts["scan"] == 1 and counts["scan>add"] >= 1
    assert announced[0]["temp_bytes"] is not None and announced[0]["error"] == ""


def test_a_dead_scan_beside_a_python_loop_is_not_in_the_program() -> None:
    solution = loaded(
        "import jax\n"
        "def f(x):\n"
        "    jax.lax.scan(lambda c, v: (c + v, None), 0.0, x)  # computed, never used\n"
        "    total = 0.0\n"
        "    for v in x:\n"
        "        total = total + v\n"
        "    return total\n"
    )
    frames = Frames()
    assert float(call(solution, [jnp.arange(4.0)], frames, analysed=True)) == 6.0
    assert "scan" not in dict(frames.analyses()[0]["primitives"])


def test_patching_the_memory_analysis_after_start_changes_nothing_the_child_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    solution = loaded("import jax.numpy as jnp\ndef f(x):\n    return jnp.outer(x, x).sum()\n")
    monkeypatch.setattr(jax.stages.Compiled, "memory_analysis", lambda _self: None)
    frames = Frames()
    call(solution, [jnp.arange(64.0)], frames, analysed=True)
    assert frames.analyses()[0]["temp_bytes"] is not None


def test_python_that_needs_a_scalars_value_is_compiled_with_every_scalar_static() -> None:
    solution = loaded("def f(x, lr, seed):\n    return x * 2 * seed if float(lr) > 0.3 else x\n")
    x, frames = jnp.arange(3.0), Frames()
    assert call(solution, [x, 0.5, 1.0], frames, analysed=True).tolist() == [0.0, 2.0, 4.0]
    assert solution.compiled and solution.scalars_static
    assert call(solution, [x, 0.1, 1.0], frames, analysed=True).tolist() == [0.0, 1.0, 2.0]
    assert call(solution, [x + 1, 0.1, 1.0], frames).tolist() == [1.0, 2.0, 3.0]
    # A program per distinct value of the scalars, each analysed like any other.
    assert len(solution.programs) == 2
    assert [a["program"] for a in frames.analyses()] == [0, 1]
    assert all(a["primitives"] is not None for a in frames.analyses())


def test_python_that_needs_concrete_arrays_falls_back_to_eager_for_good() -> None:
    solution = loaded("def f(x, lr):\n    return x * lr if float(x.sum()) > 3 else x\n")
    x, frames = jnp.arange(3.0), Frames()
    assert call(solution, [x, 0.5], frames, analysed=True).tolist() == [0.0, 1.0, 2.0]
    assert not solution.compiled  # every scalar static did not help: the array is traced
    assert call(solution, [x + 1, 0.5], frames, analysed=True).tolist() == [0.5, 1.0, 1.5]
    (eager,) = frames.analyses()  # said once, with why
    assert eager["primitives"] is None and "ConcretizationTypeError" in eager["error"]


def test_an_error_is_the_eager_error_with_its_own_message() -> None:
    solution = loaded("def f(x):\n    raise ValueError('my bug')\n")
    with pytest.raises(ValueError, match="my bug"):
        call(solution, [jnp.arange(3.0)], Frames())
    assert not solution.compiled


def test_code_that_prints_runs_eagerly_so_prints_show_values(
    capsys: pytest.CaptureFixture[str],
) -> None:
    solution = loaded(
        "def helper(x):\n    print('sum', float(x.sum()))\n    return x\n"
        "def f(x):\n    return helper(x) + 1\n"
    )
    assert not solution.compiled  # print is named in a nested function
    assert call(solution, [jnp.arange(3.0)], Frames()).tolist() == [1.0, 2.0, 3.0]
    assert capsys.readouterr().out == "sum 3.0\n"
