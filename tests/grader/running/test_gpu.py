"""GPU workers. The device choice and a GPU child's environment are tested everywhere,
independent of the caller's environment; grading on a real GPU runs wherever one is
present and is skipped with the reason elsewhere. (The bubblewrap arguments of CPU and
GPU sandboxes alike: test_sandbox.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader import versions
from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT, settings
from grader.grade import grade
from grader.problems.problem import load_problem
from grader.running import devices, gpu_sharing
from grader.running.devices import NoDeviceError, device_for
from grader.running.launch import clean_environment
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


def _fractions(env: dict[str, str]) -> list[str]:
    return [name for name in versions.MEMORY_FRACTION_NAMES if name in env]


def test_a_gpu_child_gets_one_memory_fraction_the_one_its_jaxlib_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jaxlib 0.7 and later refuse to start a GPU client given both names ("Remove the
    latter one, it is deprecated"): every GPU child failed so on an H100."""
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)
    for env in (
        clean_environment("gpu", "/tmp", 2048),
        _setenv(bwrap_arguments(device="gpu", result_fd=3, memory_mb=2048, seccomp_fd=None)),
    ):
        assert _fractions(env) == ["XLA_CLIENT_MEM_FRACTION"]  # what the pinned jaxlib reads
    assert _fractions(clean_environment("cpu", "/tmp", 2048)) == []


def test_an_older_jaxlib_on_the_host_gets_the_name_it_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A GPU host's own runtime may predate the rename: the name comes from the children's
    jaxlib (its GPU client's source), not from the version of ours."""
    probed = versions._probe(settings.child_python)
    older = {**probed, "memory_fraction_names": ["XLA_PYTHON_CLIENT_MEM_FRACTION"]}
    monkeypatch.setattr(versions, "_probe", lambda _python: older)
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)
    assert _fractions(clean_environment("gpu", "/tmp", 2048)) == ["XLA_PYTHON_CLIENT_MEM_FRACTION"]
    unreadable = {**probed, "memory_fraction_names": []}
    monkeypatch.setattr(versions, "_probe", lambda _python: unreadable)
    assert _fractions(clean_environment("gpu", "/tmp", 2048)) == ["XLA_CLIENT_MEM_FRACTION"]


def test_gpu_children_compile_without_autotuning_and_multiply_at_full_precision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)
    env = clean_environment("gpu", "/tmp", 2048)
    assert env["XLA_FLAGS"] == versions.GPU_XLA_FLAGS
    assert "--xla_gpu_autotune_level=0" in env["XLA_FLAGS"]
    assert env["JAX_DEFAULT_MATMUL_PRECISION"] == "highest"
    # No autotuning cache written into the read-only warm-up cache.
    assert env["JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES"] == "none"
    record = versions.runtime_record("gpu")
    assert record["xla_flags"] == versions.GPU_XLA_FLAGS
    assert record["matmul_precision"] == "highest"
    assert "matmul_precision" not in versions.runtime_record("cpu")


def test_the_gpu_xla_flags_are_ones_the_installed_xla_knows() -> None:
    """XLA aborts a process whose XLA_FLAGS names a flag it does not know; the flag
    table is the same in the CPU build, so this machine can prove it."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import jax, jax.numpy as jnp; print(jax.jit(lambda a: a @ a)(jnp.eye(2)).sum())",
        ],
        env={**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": versions.GPU_XLA_FLAGS},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "2.0"


def test_the_driver_libraries_a_host_names_reach_gpu_children_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GKE keeps libcuda in /usr/local/nvidia/lib64 and says so in LD_LIBRARY_PATH: a GPU
    child keeps the absolute folders that exist (bound read-only where outside /usr), a
    CPU child none; a folder inside the project or its data is never bound."""
    monkeypatch.setattr(gpu_sharing, "card_memory_mib", lambda: 81559)
    driver = tmp_path / "nvidia" / "lib64"
    driver.mkdir(parents=True)
    inside = settings.data_dir / "libs"
    inside.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{driver}:relative/lib::/no/such/folder:{inside}")
    env = clean_environment("gpu", "/tmp", 2048)
    assert env["LD_LIBRARY_PATH"] == f"{driver}:{inside}"
    assert "LD_LIBRARY_PATH" not in clean_environment("cpu", "/tmp", 2048)
    args = bwrap_arguments(device="gpu", result_fd=3, memory_mb=2048, seccomp_fd=None)
    binds = [(args[i + 1], args[i + 2]) for i, arg in enumerate(args) if arg == "--ro-bind"]
    assert (str(driver), str(driver)) in binds
    assert not [source for source, _ in binds if source == str(inside)]


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
