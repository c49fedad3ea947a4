"""What phase 3 of the author tests (grader/author_tests.py) accepts of a learner's
outputs, without a sandbox: a tree is sent to the tests only when its leaves' paths
rebuild one tree (a learner's keys must not crash the tests' sandbox, which would read
as the problem's fault)."""

from __future__ import annotations

import numpy as np
import pytest

from grader import author_tests
from grader.child import author_tests as child
from grader.judging.trees import OutputTree

WHERE = {"job": 0, "test": 0, "call": 0}


def described(paths: tuple[str, ...]) -> tuple[object, bytes]:
    leaves = tuple(np.full(2, index, np.float32) for index, _ in enumerate(paths))
    chunks: list[bytes] = []
    meta, _offset = author_tests._arrays_of(WHERE, OutputTree(paths, leaves), 0, chunks)
    return meta, b"".join(chunks)


@pytest.mark.parametrize("paths", [("a", "a/b"), ("a/b", "a"), ("w", "w"), ("p/q", "p/q/r/s")])
def test_keys_that_collide_once_joined_fail_the_test_and_never_reach_its_sandbox(
    paths: tuple[str, ...],
) -> None:
    # {"a": x, "a/b": y} flattens to the paths "a" and "a/b": rebuilt in the tests'
    # sandbox, "a" is an array and then a branch (an IndexError there, uncaught: the
    # grading became an internal error, "not your code's fault").
    meta, _data = described(paths)
    assert meta == "your code returned a tree whose keys collide once joined with '/' (a key that holds '/', or two named alike)"  # fmt: skip


def test_a_tree_of_distinct_branches_is_rebuilt_for_the_test() -> None:
    meta, data = described(("params/w", "params/b", "ab", "a/b"))
    assert isinstance(meta, dict)
    tree = child._output(meta, data)
    assert sorted(tree) == ["a", "ab", "params"] and sorted(tree["params"]) == ["b", "w"]
    assert tree["a"]["b"].tolist() == [3.0, 3.0]
