"""`jaxjudge doctor` (grader/doctor.py): run for real on this machine's CPU; its GPU and
cgroup lines, which depend on the host, from the facts a host would give."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from grader import doctor
from grader.config import PROJECT_ROOT, settings
from grader.doctor import Finding, Status
from grader.running import devices, gpu_card
from grader.running.gpu_card import Card
from grader.running.limits import SandboxLimits


@pytest.mark.slow
@pytest.mark.sandbox
def test_doctor_passes_on_this_machine_and_names_each_check() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "grader.cli", "doctor", "--device", "cpu"],
        env={**os.environ, "JAXJUDGE_DATA_DIR": str(settings.data_dir)},
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {line[6:22].strip(): line[:5].strip() for line in done.stdout.splitlines()[1:-1]}
    names = [name for name, _check in doctor.CHECKS]
    assert [name for name in lines if name in names] == names
    assert lines["gpu"] == "SKIP"  # no --device gpu
    for name in ("sandbox", "seccomp", "inside a sandbox", "grading"):
        assert lines[name] == "PASS", done.stdout
    assert "seccomp mode 2, AF_INET refused, uid 65534" in done.stdout
    assert "wrong_answer (diagnosed)" in done.stdout
    assert done.stdout.splitlines()[-1].endswith("0 failed, 1 skipped")


H100 = Card("NVIDIA H100 80GB HBM3", 81559, "580.159.04")


@pytest.fixture
def a_gpu_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_available", lambda: True)
    monkeypatch.setattr(gpu_card, "card_description", lambda: H100)
    monkeypatch.setattr(gpu_card, "cuda_plugin", lambda: "jax-cuda13-plugin 0.11.2")
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 2)
    monkeypatch.setattr(settings, "gpu_context_mb", 1024)


@pytest.mark.usefixtures("a_gpu_host")
def test_the_gpu_line_names_the_card_the_plugin_and_the_slots() -> None:
    finding = doctor._gpu("gpu")
    assert finding.status is Status.PASS, finding
    assert "NVIDIA H100 80GB HBM3, 81559 MiB, driver 580.159.04" in finding.detail
    assert "jax-cuda13-plugin 0.11.2" in finding.detail
    assert "memory fraction given as XLA_CLIENT_MEM_FRACTION" in finding.detail
    # The bank's largest limit (3072 MiB) plus CUDA's own, twice.
    assert "2 sandbox slots x 4096 MiB" in finding.detail


@pytest.mark.usefixtures("a_gpu_host")
def test_slots_that_do_not_fit_the_card_fail_with_the_number_that_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "gpu_max_sandboxes", 40)
    finding = doctor._gpu("gpu")
    assert finding.status is Status.FAIL
    assert "lower JAXJUDGE_GPU_MAX_SANDBOXES to 17" in finding.advice  # 0.9 x 81559 / 4096


@pytest.mark.usefixtures("a_gpu_host")
def test_a_gpu_host_without_the_cuda_plugin_or_nvidia_smi_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gpu_card, "cuda_plugin", lambda: None)
    assert doctor._gpu("gpu").status is Status.FAIL
    monkeypatch.setattr(gpu_card, "card_description", lambda: None)
    finding = doctor._gpu("gpu")
    assert finding.status is Status.FAIL and "nvidia-smi" in finding.detail


def test_no_gpu_is_a_failure_only_when_one_is_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_available", lambda: False)
    assert doctor._gpu("cpu").status is Status.SKIP
    assert doctor._gpu("gpu").status is Status.FAIL


def test_without_a_cgroup_a_gpu_host_fails_and_a_cpu_host_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unbounded = SandboxLimits(None, cgroup_problem="could not create /x: read-only")
    monkeypatch.setattr("grader.running.limits.sandbox_limits", lambda: unbounded)
    on_gpu, on_cpu = doctor._cgroups("gpu"), doctor._cgroups("cpu")
    assert on_gpu.status is Status.FAIL and "refuses to start" in on_gpu.detail
    assert "JAXJUDGE_ALLOW_UNBOUNDED_GPU_MEMORY" in on_gpu.advice
    assert on_cpu.status is Status.WARN and "RLIMIT_AS" in on_cpu.detail
    assert "could not create /x" in on_cpu.detail


def test_a_check_that_breaks_is_a_failure_and_sandboxed_checks_wait_for_a_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(_device: str) -> Finding:
        raise OSError("the disk is gone")

    seen: list[Finding] = []
    monkeypatch.setattr(
        doctor,
        "CHECKS",
        (
            ("sandbox", lambda _d: Finding("sandbox", Status.FAIL, "no bwrap")),
            ("warm-up cache", broken),
            ("inside a sandbox", broken),
        ),
    )
    findings = doctor.examine("cpu", seen.append)
    assert findings == seen
    assert findings[1].status is Status.FAIL and "the disk is gone" in findings[1].detail
    assert findings[2].status is Status.SKIP
    assert doctor.summary(findings).endswith("0 passed, 0 warned, 2 failed, 1 skipped")
