"""GPU workers. The device choice and the GPU sandbox's set-up are tested everywhere,
independent of the caller's environment; grading on a real GPU runs wherever one is
present and is skipped with the reason elsewhere."""

from __future__ import annotations

import threading

import pytest

from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT, settings
from grader.grade import grade
from grader.problems.problem import load_problem
from grader.running import devices, gpu_sharing
from grader.running.devices import NoDeviceError, device_for
from grader.running.sandbox import bwrap_arguments


def _setenv(args: list[str]) -> dict[str, str]:
    return {args[i + 1]: args[i + 2] for i, arg in enumerate(args) if arg == "--setenv"}


@pytest.mark.parametrize("prefer_gpu", [False, True])
@pytest.mark.parametrize("has_gpu", [False, True])
def test_device_choice(monkeypatch: pytest.MonkeyPatch, prefer_gpu: bool, has_gpu: bool) -> None:
    monkeypatch.setattr(settings, "prefer_gpu", prefer_gpu)
    monkeypatch.setattr(devices, "gpu_available", lambda: has_gpu)
    assert device_for("cpu") == "cpu"
    assert device_for("any") == ("gpu" if prefer_gpu and has_gpu else "cpu")
    if has_gpu:
        assert device_for("gpu") == "gpu"
    else:
        with pytest.raises(NoDeviceError, match="needs a GPU worker"):
            device_for("gpu")


def test_cpu_sandboxes_are_pinned_to_the_cpu_and_never_preallocate() -> None:
    args = bwrap_arguments(device="cpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    env = _setenv(args)
    assert env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert not any(arg.startswith("/dev/nvidia") for arg in args)


def test_gpu_sandboxes_share_the_card_by_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)
    env = _setenv(bwrap_arguments(device="gpu", result_fd=3, memory_mb=4096, seccomp_fd=None))
    assert "JAX_PLATFORMS" not in env
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"  # several sandboxes share one card
    assert env["XLA_PYTHON_CLIENT_MEM_FRACTION"] == env["XLA_CLIENT_MEM_FRACTION"] == "0.0502"


def test_no_bind_lands_below_the_already_bound_usr(monkeypatch: pytest.MonkeyPatch) -> None:
    """/usr/local/cuda is a symlink below /usr on CUDA hosts: a second bind there fails."""
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)  # no card is asked
    args = bwrap_arguments(device="gpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    targets = [args[i + 2] for i, arg in enumerate(args) if arg in ("--ro-bind", "--dev-bind")]
    assert "/usr" in targets
    assert not [t for t in targets if t.startswith("/usr/")]


@pytest.mark.gpu
def test_gpu_sandboxes_see_the_gpu_devices() -> None:
    args = bwrap_arguments(device="gpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    assert "/dev/nvidia0" in args


@pytest.mark.gpu
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_reference_and_a_mistake_graded_on_a_real_gpu() -> None:
    problem = load_problem(PROJECT_ROOT / "problems" / "nnx-grad-accumulation")
    accepted = grade(problem, problem.reference_source, device="gpu", variant=0)
    assert accepted.verdict is Verdict.ACCEPTED, accepted.message
    assert accepted.versions["backend"] == "gpu"
    mistake = next(m for m in problem.mistakes if m.name == "summed_gradients")
    wrong = grade(problem, mistake.source, device="gpu", variant=0)
    assert wrong.verdict is Verdict.WRONG_ANSWER
    assert wrong.diagnosis == mistake.diagnosis  # a known mistake on the GPU gets its own


HOG = """
import jax.numpy as jnp

def grad_accumulation_step(seed, x_a, y_a, x_b, y_b, lr):
    kept = []
    while True:  # holds ever more device memory until something stops it
        kept.append(jnp.ones((16_000, 16_000), jnp.float32) + len(kept))
"""


@pytest.mark.gpu
@pytest.mark.sandbox
@pytest.mark.slow
def test_a_memory_hog_beside_a_correct_submission_leaves_it_accepted() -> None:
    problem = load_problem(PROJECT_ROOT / "problems" / "nnx-grad-accumulation")
    results: dict[str, Verdict] = {}

    def run(name: str, source: str) -> None:
        results[name] = grade(problem, source, device="gpu", variant=1).verdict

    hog = threading.Thread(target=run, args=("hog", HOG))
    hog.start()
    run("correct", problem.reference_source)
    hog.join(timeout=300)
    assert results["correct"] is Verdict.ACCEPTED
    assert results["hog"] in (Verdict.MEMORY_LIMIT_EXCEEDED, Verdict.RUNTIME_ERROR)
