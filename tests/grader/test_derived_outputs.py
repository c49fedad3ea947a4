"""A course problem checked on one device or runtime is graded on another (a GPU worker,
an upgraded JAX) with expected outputs derived there from its stored check results
(grader/expected.py ``derive``): its reference runs again in a sandbox on the check's
bank, and what it answers is kept only if it agrees with what the check stored. A
reference that answers differently after its check (a time bomb) is refused."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grader import author_code, expected
from grader.config import settings
from grader.errors import CheckResultsMissingError, DerivationRefusedError
from grader.judging.trusted import Outputs, TrustedOutputs
from grader.problems.problem import Problem, load_problem
from tests.conftest import lean_copy

SLUG = "stable-logsumexp"  # the smallest bank problem: numpy cases, a one-line reference
# Each long enough for a check and a derive on an idle machine, then on busier ones: the
# test waits out the first fuse its runs finished under (the sleep is most of its time).
FUSE_SECONDS = (15.0, 30.0, 60.0)

# Appended to the reference: honest until the clock passes {when}, the sandbox's real clock.
TIME_BOMB = """

_honest = logsumexp_and_softmax


def logsumexp_and_softmax(logits):
    import time

    lse, softmax = _honest(logits)
    return (lse + 1.0, softmax) if time.time() > {when} else (lse, softmax)
"""


def untrusted(folder: Path) -> Problem:
    return load_problem(folder, trusted=False)


def shifted(trusted: TrustedOutputs, key: str, by: float) -> TrustedOutputs:
    """``trusted`` with the reference's first output on case ``key`` moved by ``by``."""
    reference = dict(trusted.reference)
    first, *rest = reference[key]
    assert isinstance(first, np.ndarray)
    reference[key] = [first + by, *rest]
    return replace(trusted, reference=reference)


def test_disagreement_names_the_worst_case_within_the_devices_tolerance(tmp_path: Path) -> None:
    problem = load_problem(lean_copy(SLUG, tmp_path))  # trusted: no sandbox, only its config
    outputs: Outputs = [np.zeros(2, dtype=np.float32), np.full((2, 3), 1 / 3, dtype=np.float32)]
    anchor = TrustedOutputs(reference={"a": outputs, "b": outputs})
    assert expected._disagreement(problem, "cpu", anchor, anchor) is None
    tiny = shifted(anchor, "a", 1e-9)  # within any tolerance
    assert expected._disagreement(problem, "cpu", tiny, anchor) is None
    worse = shifted(shifted(anchor, "a", 0.5), "b", 2.0)
    why = expected._disagreement(problem, "cpu", worse, anchor)
    assert why is not None and "worst on case 'b'" in why and "output 0" in why
    lacking = TrustedOutputs(reference={"a": outputs})
    why = expected._disagreement(problem, "cpu", anchor, lacking)
    assert why == "its check stored no matching outputs for case 'b'"


def test_with_no_stored_outputs_nothing_is_derived(tmp_path: Path) -> None:
    problem = untrusted(lean_copy(SLUG, tmp_path))
    with pytest.raises(CheckResultsMissingError, match="no stored expected outputs"):
        expected.derive(problem, "cpu", [])


def _armed_and_derived(folder: Path, fuse: float) -> tuple[float, TrustedOutputs] | None:
    """The reference set to answer wrongly ``fuse`` seconds from now, checked (what its
    check stored), then derived from that check before the fuse; None when the runs did
    not finish before it (a busy machine: try a longer fuse)."""
    bomb = time.time() + fuse
    reference = folder.parent.parent / "reference_solutions" / f"{SLUG}.py"
    reference.write_text(reference.read_text() + TIME_BOMB.format(when=bomb))
    try:
        with author_code.checking():  # what its check ran and stored
            anchor = expected.compute(untrusted(folder))
        for kept in settings.expected_cache_dir.glob(f"{SLUG}-*"):
            kept.unlink()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(author_code, "_run", _no_cases_sandbox)  # the bank is the check's
            derived = expected.derive(untrusted(folder), "cpu", [anchor])
    except Exception:
        if time.time() < bomb:
            raise
        return None
    if time.time() >= bomb:
        return None
    assert derived.reference.keys() == anchor.reference.keys()
    return bomb, anchor


def _no_cases_sandbox(*_args: object) -> None:
    raise AssertionError("the author's cases.py ran outside a check")


@pytest.mark.sandbox
@pytest.mark.slow  # sandboxed runs of a reference that imports JAX, and a fuse
def test_outputs_that_agree_are_derived_and_a_time_bomb_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fuse in FUSE_SECONDS:
        folder = lean_copy(SLUG, tmp_path / f"fuse-{fuse:g}")
        if (armed := _armed_and_derived(folder, fuse)) is not None:
            break
    else:
        pytest.fail(f"a check and a derive outlasted every fuse ({FUSE_SECONDS} s)")
    bomb, anchor = armed
    monkeypatch.setattr(author_code, "_run", _no_cases_sandbox)
    assert expected.on_disk(untrusted(folder), "cpu")  # kept: grading reads it, runs nothing
    assert expected.load_or_compute(untrusted(folder)).reference.keys() == anchor.reference.keys()

    expected._path(untrusted(folder), "cpu").unlink()  # another machine, after the fuse
    time.sleep(max(0.0, bomb - time.time()) + 0.5)
    with pytest.raises(DerivationRefusedError) as refused:
        expected.derive(untrusted(folder), "cpu", [anchor])
    message = str(refused.value)
    assert "cannot be graded on device 'cpu'" in message, message
    assert "differ from its check's, worst on case" in message, message
    assert "run the check again" in message
    assert not expected.on_disk(untrusted(folder), "cpu")  # nothing kept
