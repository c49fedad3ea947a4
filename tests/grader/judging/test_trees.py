"""Pytree outputs and inputs (grader/judging/trees.py and the parts of the child, the frame
reader, the trusted-output cache and the feedback that carry them): fast, no sandbox."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from grader import expected
from grader.cases import Case, validate_cases
from grader.child import protocol
from grader.child.protocol import MAX_TREE_LEAVES, Kind
from grader.child.run import tree_leaves
from grader.child.verdicts import Verdict
from grader.errors import ProblemError
from grader.judging.compare import Failure
from grader.judging.feedback import learner_view
from grader.judging.job import Job, Solution
from grader.judging.report import CaseReport, GradeReport
from grader.judging.trees import OutputTree, compare_output
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Tolerance
from grader.running.frames import FrameCollector

TOLERANCE = Tolerance(rtol=1e-5, atol=1e-6)


def tree(**leaves: Any) -> OutputTree:
    return OutputTree(tuple(leaves), tuple(np.asarray(v) for v in leaves.values()))


PARAMS = tree(**{"dense_0/w": np.ones((3, 4), np.float32), "dense_0/b": np.zeros(4, np.float32)})


def test_equal_trees_pass_whatever_order_the_leaves_arrive_in() -> None:
    reordered = OutputTree(tuple(reversed(PARAMS.paths)), tuple(reversed(PARAMS.leaves)))
    assert compare_output(reordered, PARAMS, TOLERANCE, "params").ok


def test_a_missing_leaf_is_a_structure_failure_that_names_it() -> None:
    partial = tree(**{"dense_0/w": np.ones((3, 4), np.float32), "dense_0/bias": np.zeros(4)})
    result = compare_output(partial, PARAMS, TOLERANCE, "params")
    assert not result.ok and result.failure is Failure.STRUCTURE
    assert result.leaf == "params/dense_0/b"
    assert "missing params/dense_0/b" in result.reason
    assert "unexpected params/dense_0/bias" in result.reason


def test_a_leaf_the_reference_lacks_is_never_the_named_leaf() -> None:
    """An unexpected path is the learner's own text (it could spell out a hidden input):
    only the sample's message lists it; the leaf a hidden case shows is the reference's."""
    extra = tree(**{"dense_0/w": np.ones((3, 4), np.float32), "dense_0/b": np.zeros(4, np.float32),
                    "input_was_0.123": np.zeros(1, np.float32)})  # fmt: skip
    result = compare_output(extra, PARAMS, TOLERANCE, "params")
    assert result.failure is Failure.STRUCTURE and result.leaf is None
    case = CaseReport(name="h", hidden=True, verdict=Verdict.WRONG_ANSWER, failure="structure",
                      leaf=result.leaf, message=result.reason)  # fmt: skip
    report = GradeReport(
        problem="p", mode="submit", verdict=Verdict.WRONG_ANSWER, score=0.0, cases=[case]
    )
    assert "0.123" not in learner_view(report).model_dump_json()


def test_a_leaf_outside_the_tolerance_is_named_by_its_path() -> None:
    off = tree(
        **{"dense_0/w": np.ones((3, 4), np.float32), "dense_0/b": np.full(4, 0.5, np.float32)}
    )
    result = compare_output(off, PARAMS, TOLERANCE, "params")
    assert result.failure is Failure.TOLERANCE and result.leaf == "params/dense_0/b"


def test_a_leaf_of_the_wrong_shape_says_both_shapes() -> None:
    transposed = tree(
        **{"dense_0/w": np.ones((4, 3), np.float32), "dense_0/b": np.zeros(4, np.float32)}
    )
    result = compare_output(transposed, PARAMS, TOLERANCE, "params")
    assert result.failure is Failure.SHAPE and result.leaf == "params/dense_0/w"
    assert (result.expected_shape, result.actual_shape) == ("(3, 4)", "(4, 3)")


def test_each_leaf_keeps_its_dtype_kind() -> None:
    """An Optax step count is an integer leaf: a float in its place is a dtype failure,
    even when its value is right."""
    state = tree(count=np.array(3, np.int32), mu=np.zeros(2, np.float32))
    as_float = tree(count=np.array(3.0, np.float32), mu=np.zeros(2, np.float32))
    result = compare_output(as_float, state, TOLERANCE, "state")
    assert result.failure is Failure.DTYPE and result.leaf == "state/count"
    assert "integer leaf (int32)" in result.reason
    assert compare_output(tree(count=np.array(3, np.int64), mu=np.zeros(2)), state, TOLERANCE).ok


def test_a_leaf_that_is_not_an_array_is_invalid() -> None:
    broken = OutputTree(PARAMS.paths, (np.ones((3, 4), np.float32), "the function returned None"))
    result = compare_output(broken, PARAMS, TOLERANCE, "params")
    assert result.failure is Failure.INVALID and result.leaf == "params/dense_0/b"


def test_an_array_where_a_tree_is_expected_is_invalid_not_a_crash() -> None:
    result = compare_output(np.zeros(3, np.float32), PARAMS, TOLERANCE)
    assert not result.ok and result.failure is Failure.INVALID


class Adam(NamedTuple):
    count: Any
    mu: Any


def test_the_child_names_leaves_by_dict_keys_indices_and_field_names() -> None:
    value = {
        "opt": Adam(jnp.array(1, jnp.int32), [jnp.ones(2), jnp.zeros(1)]),
        "step": jnp.ones(()),
    }
    named = tree_leaves(value, max_elements=100, jax=jax)
    assert [path for path, _ in named] == ["opt/count", "opt/mu/0", "opt/mu/1", "step"]
    assert named[0][1].array is not None and named[0][1].array.dtype == np.int32


def test_an_nnx_state_and_the_same_parameters_as_a_dict_have_the_same_leaves() -> None:
    from flax import nnx

    layer = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    as_state = tree_leaves(nnx.state(layer, nnx.Param), max_elements=100, jax=jax)
    as_dict = tree_leaves(
        {"kernel": layer.kernel.get_value(), "bias": layer.bias.get_value()},  # type: ignore[union-attr]
        max_elements=100,
        jax=jax,
    )
    assert [path for path, _ in as_state] == [path for path, _ in as_dict] == ["bias", "kernel"]
    assert [path for path, _ in tree_leaves(layer.kernel, max_elements=100, jax=jax)] == [""]


def test_a_bare_array_in_a_tree_output_is_one_leaf_with_an_empty_path() -> None:
    [(path, converted)] = tree_leaves(jnp.ones(3), max_elements=100, jax=jax)
    assert path == "" and converted.array is not None


def test_too_many_leaves_is_refused_in_the_child() -> None:
    with pytest.raises(ValueError, match="leaves"):
        tree_leaves([jnp.ones(1)] * (MAX_TREE_LEAVES + 1), max_elements=10_000, jax=jax)


TREE_JOB = Job(
    "solve",
    1,
    (Solution("s", "pass"),),
    (Case("sample", {"x": np.ones(2, np.float32)}, sample=True),),
    5.0,
    2048,
    tree_outputs=frozenset({0}),
)


def collect(outputs: list[Any], data: bytes) -> FrameCollector:
    collector = FrameCollector(max_elements=1000)
    collector.bind(TREE_JOB)
    stream = protocol.encode_frame(
        Kind.HELLO, {"backend": "cpu", "pid": 1}
    ) + protocol.encode_frame(
        Kind.CASE_RESULT,
        {"solution": 0, "case": 0, "program": None, "seconds": 0.1, "outputs": outputs},
        data,
    )
    collector.read_all(io.BytesIO(stream), 1 << 20, lambda: None)
    return collector


def test_the_parent_reads_a_tree_output_into_paths_and_leaves() -> None:
    specs, data = protocol.pack_arrays([np.ones(2, np.float32), np.zeros((), np.float32)])
    entries = [{"path": "w", "leaf": specs[0]}, {"path": "b", "leaf": {"invalid": "None"}}]
    collector = collect([{"tree": entries}], data)
    assert collector.outcome.protocol_error is None
    [output] = collector.outcome.solutions[0].cases[0].outputs or []
    assert isinstance(output, OutputTree) and output.paths == ("w", "b")
    assert output.leaves[1] == "None"


def test_two_leaves_at_one_path_make_the_answer_invalid_not_the_channel() -> None:
    specs, data = protocol.pack_arrays([np.ones(2, np.float32), np.ones(2, np.float32)])
    entries = [{"path": "1", "leaf": specs[0]}, {"path": "1", "leaf": specs[1]}]
    collector = collect([{"tree": entries}], data)
    assert collector.outcome.protocol_error is None
    [output] = collector.outcome.solutions[0].cases[0].outputs or []
    assert isinstance(output, str) and "two leaves" in output


@pytest.mark.parametrize(
    "outputs",
    [
        [{"tree": [{"path": "w"}]}],
        [{"tree": "w"}],
        [{"tree": [{"path": 3, "leaf": {"invalid": "x"}}]}],
        [{"tree": [{"path": "w", "leaf": {"invalid": "x"}}] * (MAX_TREE_LEAVES + 1)}],
        [{"dtype": "float32", "shape": [], "offset": 0, "nbytes": 4}],  # an array, not a tree
    ],
)
def test_malformed_tree_outputs_are_protocol_errors(outputs: list[Any]) -> None:
    assert collect(outputs, b"\0" * 4).outcome.protocol_error


def test_hidden_cases_say_the_kind_of_mismatch_and_not_the_leaf() -> None:
    # Which leaf fails first is the learner's choice, so even a path of the reference's
    # tree would carry a number the code chose (log2 of the leaf count, per case).
    case = CaseReport(
        name="wide",
        hidden=True,
        verdict=Verdict.WRONG_ANSWER,
        failure=Failure.TOLERANCE.value,
        leaf="params/dense_1/b",
        max_abs_error=0.25,
        message="leaf params/dense_1/b: max abs error 0.25 at index (3,)",
    )
    report = GradeReport(
        problem="p", mode="submit", verdict=Verdict.WRONG_ANSWER, score=0.0, cases=[case]
    )
    [seen] = learner_view(report).cases
    assert seen.leaf is None
    assert seen.message == "the output is outside the tolerance"
    assert seen.max_abs_error is None and "0.25" not in seen.model_dump_json()


def test_tree_arguments_travel_flat_and_arrive_nested() -> None:
    params = {
        "dense_0": {"w": np.ones((2, 3), np.float32), "b": np.zeros(3, np.float32)},
        "scale": np.ones(1, np.float32),
    }
    meta, data = protocol.pack_cases([[params, 0.5]])
    [[back, rate]] = protocol.unpack_cases(meta, data, max_elements=100)
    assert rate == 0.5 and isinstance(back, dict)
    assert back["dense_0"]["w"].shape == (2, 3) and back["scale"].tolist() == [1.0]


def test_trusted_trees_survive_the_disk_cache(tmp_path: Path) -> None:
    state = OutputTree(("count", "mu/w"), (np.array(2, np.int32), np.ones((2, 2), np.float32)))
    trusted = TrustedOutputs(
        reference={"sample": [state, np.zeros(3, np.float32)]},
        mistakes={"off_by_one": {"hidden@4": [state, np.ones(3, np.float32)]}},
    )
    path = tmp_path / "outputs.npz"
    expected._save(path, trusted)
    again = expected._load(path)
    [tree_back, array_back] = again.reference["sample"]
    assert isinstance(tree_back, OutputTree) and tree_back.paths == ("count", "mu/w")
    assert tree_back.leaves[0].dtype == np.int32  # type: ignore[union-attr]
    assert array_back.tolist() == [0.0, 0.0, 0.0]  # type: ignore[union-attr]
    assert compare_output(again.mistakes["off_by_one"]["hidden@4"][0], state, TOLERANCE).ok


@pytest.mark.parametrize(
    ("params", "phrase"),
    [
        ({"a/b": np.ones(2, np.float32)}, "without '/'"),
        ({"w": 0.5}, "leaves are float32 arrays"),
        ({}, "empty dict"),
        ({"w": np.ones(2, np.float64)}, "float32"),
    ],
)
def test_cases_py_tree_arguments_are_validated(params: dict[str, Any], phrase: str) -> None:
    with pytest.raises(ProblemError, match=phrase):
        validate_cases(Path("cases.py"), [Case("one", {"params": params}, sample=True)], ["params"])
