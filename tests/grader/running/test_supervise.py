"""The supervisor's checks around a child: the device it really started on, and where
the runtime's native log lines go."""

from __future__ import annotations

import logging

import pytest

from grader import expected
from grader.child import protocol
from grader.child.verdicts import Mode, Verdict
from grader.config import PROJECT_ROOT
from grader.grade import grade, grade_outcome
from grader.problems.problem import load_problem
from grader.running.devices import gpu_available
from grader.running.launch import PlainLauncher
from grader.running.supervise import ProcessRunner

pytestmark = [pytest.mark.sandbox]
SCAN = PROJECT_ROOT / "problems" / "scan-microbatched-grads"


@pytest.mark.slow  # four runtimes start: two gradings' tries and two trusted runs'
@pytest.mark.skipif(
    gpu_available(), reason="a GPU is here: the child would start on it (the fallback needs none)"
)
def test_a_child_on_another_backend_than_asked_fails_loudly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Asked for the GPU, JAX started on the CPU (here: there is no GPU; on a GPU host:
    CUDA failed to initialise and JAX fell back). Its outputs would be compared with
    the wrong device's expected values: the grading is the grader's failure, put back
    in the queue, and a trusted run refuses to produce expected outputs."""
    problem = load_problem(SCAN)
    runner = ProcessRunner(PlainLauncher(trusted=False))
    trusted = expected.load_or_compute(problem, "cpu")
    graded = grade_outcome(
        problem, problem.reference_source, device="gpu", runner=runner, trusted=trusted
    )
    assert graded.report.verdict is Verdict.INTERNAL_ERROR
    assert graded.retry_later
    assert "started on 'cpu', not on the 'gpu' device asked for" in caplog.text
    with pytest.raises(expected.ReferenceRunError, match="not on the 'gpu' device"):
        expected.compute(problem, "gpu")


NOISY = """
import os, sys
from jax import lax
import jax.numpy as jnp

def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    os.write(2, b"native-style log line\\n")  # what XLA and CUDA write on fd 2
    print("learner wrote on stderr", file=sys.stderr)
    n = int(n_microbatches)
    xs, ys = x_full.reshape(n, -1), y_full.reshape(n, -1)
    def step(acc, chunk):
        x, y = chunk
        g = jnp.sum(2 * (w * x - y) * x) / x_full.shape[0]
        return acc + g, None
    total, _ = lax.scan(step, jnp.float32(0.0), (xs, ys))
    return total
"""


def test_native_log_lines_go_to_the_operator_and_python_stderr_to_the_learner(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="jaxjudge.supervise")
    report = grade(load_problem(SCAN), NOISY, mode=Mode.RUN)
    assert "learner wrote on stderr" in report.stdout
    assert "native-style log line" not in report.stdout
    assert "native-style log line" in caplog.text


LOADED = """
import sys
from jax import lax
import jax.numpy as jnp

def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    # Spelled apart: a mention of either name is what asks for them ahead.
    print("libraries loaded:", "fl" + "ax" in sys.modules, "op" + "tax" in sys.modules)
    n = int(n_microbatches)
    xs, ys = x_full.reshape(n, -1), y_full.reshape(n, -1)
    def step(acc, chunk):
        x, y = chunk
        return acc + jnp.sum(2 * (w * x - y) * x) / x_full.shape[0], None
    return lax.scan(step, jnp.float32(0.0), (xs, ys))[0]
"""


@pytest.mark.slow  # two children start
def test_a_job_that_names_no_library_starts_with_jax_alone_and_one_that_does_with_them() -> None:
    """A one-shot child imports flax and optax ahead of its job only when the job's code
    names one of them (0.45 s of CPU a child otherwise); naming one, even in a comment,
    keeps the learner's own import of it off the job's clock."""
    problem = load_problem(SCAN)
    alone = grade(problem, LOADED, mode=Mode.RUN)  # in its sandbox, as a learner's is
    assert "libraries loaded: False False" in alone.stdout, alone.stdout
    named = LOADED + "# a learner's note: optax could do this too\n"
    ahead = grade(problem, named, mode=Mode.RUN)
    assert "libraries loaded: True True" in ahead.stdout, ahead.stdout


def test_the_libraries_are_named_by_any_mention() -> None:
    assert not protocol.names_the_libraries(["import jax\n", "x = 1\n"])
    assert protocol.names_the_libraries(["import jax\n", "from flax import nnx\n"])
    assert protocol.names_the_libraries(["# optax.adam would do\n"])
