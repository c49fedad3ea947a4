"""`jaxjudge doctor`: what an operator runs on a new host before it grades anything.

Each check prints one line, PASS, WARN (grading works with a weaker guarantee),
FAIL (it does not, or not safely) or SKIP, and, where it is not a PASS, what to do.
The checks go from the host's kernel to a real grading: bubblewrap and user
namespaces, the seccomp filter, the cgroup layout and what the sandboxes get from
it, the GPU (with ``--device gpu``), the warm-up cache, the runtime and its
confinement seen from inside a real sandbox, and a reference and a known mistake
graded on the device. Exit status 1 when any check fails.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from grader.child.verdicts import Mode, Verdict
from grader.config import PROJECT_ROOT, settings
from grader.problems.problem import Problem, find_problem, load_problem, problem_folders

BANK_PROBLEM = "nnx-grad-accumulation"  # small, and Flax, Optax and jax.grad on the device
BANK_MISTAKE = "summed_gradients"
DOCS = "docs/deployment.md"


class Status(StrEnum):
    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    detail: str
    advice: str = ""

    def render(self) -> str:
        line = f"{self.status.value:<5} {self.check:<16} {self.detail}"
        return line + (f"\n{'':22}-> {self.advice}" if self.advice else "")


def _sandbox() -> Finding:
    from grader.running.sandbox import SandboxUnavailableError, bwrap_arguments, bwrap_path

    name = "sandbox"
    try:
        bwrap = bwrap_path()
    except SandboxUnavailableError as error:
        return Finding(name, Status.FAIL, str(error), "install bubblewrap (Debian: bubblewrap)")
    version = subprocess.run(
        [bwrap, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    # A sandbox as every submission gets it (its namespaces, identity and mounts),
    # running /bin/true instead of the child.
    sandbox = bwrap_arguments(device="cpu", result_fd=1, memory_mb=256, seccomp_fd=None)
    tried = subprocess.run(
        [*sandbox[: sandbox.index("--") + 1], "/bin/true"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if tried.returncode != 0:
        return Finding(
            name,
            Status.FAIL,
            f"{version} cannot build a sandbox: {tried.stderr.strip()[-300:]}",
            "user namespaces must be allowed (sysctl user.max_user_namespaces > 0; on"
            " Ubuntu 23.10+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor"
            f" profile); in a container, the options of {DOCS}, 'Containers'",
        )
    return Finding(
        name,
        Status.PASS,
        f"{version} at {bwrap}: user, PID, network, IPC, UTS, cgroup and mount namespaces,"
        " uid 65534, no capabilities",
    )


def _seccomp() -> Finding:
    from grader.running import seccomp

    try:
        program = seccomp.filter_bpf()
    except seccomp.SeccompUnavailableError as error:
        return Finding("seccomp", Status.FAIL, str(error), "no sandbox starts until it is fixed")
    return Finding(
        "seccomp",
        Status.PASS,
        f"filter built ({len(program) // 8} BPF instructions): {len(seccomp.DENIED)} system"
        " calls, new namespaces and every socket family but AF_UNIX refused",
    )


def _cgroups(device: str) -> Finding:
    from grader.running.limits import sandbox_limits

    limits = sandbox_limits()
    layout = limits.cgroup
    if layout is not None:
        shares = "CPU shares" if layout.cpu_dir else "no CPU shares (cpu controller not offered)"
        changed = f"; to get there it {'; '.join(limits.steps)}" if limits.steps else ""
        return Finding(
            "cgroups",
            Status.PASS,
            f"cgroup v{layout.version} at {layout.memory_dir}: each sandbox gets its problem's"
            f" memory limit for all its processes and tmpfs pages, {settings.sandbox_max_pids}"
            f" processes/threads, {shares}, CPU time counted per sandbox{changed}",
        )
    why = limits.cgroup_problem
    if device == "gpu" and not settings.allow_unbounded_gpu_memory:
        return Finding(
            "cgroups",
            Status.FAIL,
            f"no usable cgroup ({why}): GPU sandboxes would have no host-memory bound, so a"
            " GPU worker refuses to start",
            f"give the worker a writable cgroup ({DOCS}, 'Memory bounds'), or set"
            " JAXJUDGE_ALLOW_UNBOUNDED_GPU_MEMORY=true knowingly",
        )
    return Finding(
        "cgroups",
        Status.WARN,
        f"no usable cgroup ({why}): memory is bounded per process (RLIMIT_AS), processes"
        " are not counted, no CPU shares",
        f"for a bound per sandbox, a writable cgroup ({DOCS}, 'Memory bounds')",
    )


def _gpu(device: str) -> Finding:
    if device != "gpu":
        return Finding("gpu", Status.SKIP, "not asked for (--device gpu checks the card)")
    from grader.running import devices, gpu_card
    from grader.running.launch import library_path
    from grader.versions import memory_fraction_name, runtime_versions

    if not devices.gpu_available():
        return Finding("gpu", Status.FAIL, "no /dev/nvidia0 on this machine", "run on a GPU host")
    card = gpu_card.card_description()
    if card is None:
        return Finding(
            "gpu",
            Status.FAIL,
            "nvidia-smi is missing or does not answer: the card's size and the memory watch"
            " need it",
            "install the driver's utilities (NVIDIA_DRIVER_CAPABILITIES=compute,utility)",
        )
    largest = max((p.config.limits.memory_mb for p in _bank()), default=2048)
    plan = gpu_card.slot_plan(card.memory_mib, largest)
    plugin = gpu_card.cuda_plugin()
    detail = (
        f"{card.name}, {card.memory_mib} MiB, driver {card.driver}; jax"
        f" {runtime_versions().get('jax')} with {plugin or 'NO CUDA plugin'}; memory fraction"
        f" given as {memory_fraction_name()}; {plan.describe()}"
    )
    if folders := library_path():
        detail += f"; LD_LIBRARY_PATH kept for children: {':'.join(map(str, folders))}"
    if plugin is None:
        return Finding("gpu", Status.FAIL, detail, "install jax's CUDA plugin at the pinned jax")
    if not plan.fits:
        return Finding("gpu", Status.FAIL, detail, plan.advice())
    return Finding("gpu", Status.PASS, detail)


def _warmup_cache(device: str) -> Finding:
    from grader.running import warmup_cache

    started = time.monotonic()
    directory = warmup_cache.ensure(device)
    if directory is None:
        return Finding(
            "warm-up cache",
            Status.WARN,
            "could not be filled: sandboxes start without it, several seconds slower",
            "see the log line 'could not fill the warm-up compilation cache'",
        )
    entries = sum(1 for path in directory.iterdir() if not path.name.startswith("."))
    return Finding(
        "warm-up cache",
        Status.PASS,
        f"{directory}: {entries} compiled programs, read-only in every sandbox"
        f" (ready in {time.monotonic() - started:.1f} s)",
    )


PROBE = """
import json, os, socket

def solve(x, scale):
    facts = {"uid": os.getuid()}
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        facts["inet"] = "allowed"
    except OSError as error:
        facts["inet"] = "refused"
    status = open("/proc/self/status").read().splitlines()
    facts["seccomp"] = next((l.split()[1] for l in status if l.startswith("Seccomp:")), "?")
    facts["sees"] = [p for p in %r if os.path.exists(p)]
    import jax
    facts["backend"] = jax.default_backend()
    facts["devices"] = [str(d) for d in jax.devices()]
    print("DOCTOR " + json.dumps(facts))
    return x * scale
"""


@contextlib.contextmanager
def _probe_problem() -> Iterator[Problem]:
    from grader.problems.scaffold import scaffold

    root = Path(tempfile.mkdtemp(prefix="jaxjudge-doctor-"))
    try:
        scaffold("doctor-probe", root)
        yield load_problem(root / "problems" / "doctor-probe")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _inside(device: str) -> Finding:
    from grader.grade import grade

    # What a sandbox must never reach (the warm-up cache's parents exist, empty, as
    # the mount points of its read-only bind).
    hidden = [
        str(PROJECT_ROOT / "reference_solutions"),
        str(PROJECT_ROOT / "problems"),
        str(settings.trusted_cache_dir),
        str(settings.expected_cache_dir.resolve()),
    ]
    with _probe_problem() as problem:
        report = grade(problem, PROBE % (hidden,), mode=Mode.RUN, device=device, variant=0)
    line = next((ln for ln in report.stdout.splitlines() if ln.startswith("DOCTOR ")), None)
    if report.verdict is not Verdict.ACCEPTED or line is None:
        return Finding(
            "inside a sandbox",
            Status.FAIL,
            f"a probe submission ended {report.verdict.value}: {report.message[-400:]}",
            "the log has the sandbox's own words (bubblewrap, the runtime)",
        )
    facts = json.loads(line.removeprefix("DOCTOR "))
    wrong = []
    if facts["backend"] != device:
        wrong.append(f"JAX runs on {facts['backend']!r}, not the {device}")
    if facts["seccomp"] != "2":
        wrong.append("no seccomp filter is active")
    if facts["inet"] != "refused":
        wrong.append("an AF_INET socket was allowed")
    if facts["uid"] != 65534:
        wrong.append(f"runs as uid {facts['uid']}")
    if facts["sees"]:
        wrong.append(f"sees {', '.join(facts['sees'])}")
    detail = (
        f"JAX on {facts['backend']} ({', '.join(facts['devices'][:2])}), seccomp mode"
        f" {facts['seccomp']}, AF_INET {facts['inet']}, uid {facts['uid']}; problems,"
        " references, trusted outputs and cache invisible"
    )
    if wrong:
        return Finding(
            "inside a sandbox",
            Status.FAIL,
            f"{'; '.join(wrong)} ({detail})",
            "this host's sandboxes are not confined as docs/security.md says: do not grade here",
        )
    return Finding("inside a sandbox", Status.PASS, detail)


def _bank() -> list[Problem]:
    problems = []
    for folder in problem_folders():
        with contextlib.suppress(Exception):
            problems.append(load_problem(folder))
    return problems


def _grading(device: str) -> Finding:
    from grader import calibration, expected
    from grader.grade import grade, measure_reference

    folder = find_problem(BANK_PROBLEM)
    problem = load_problem(folder) if folder else next(iter(_bank()), None)
    if problem is None or not problem.mistakes:
        return Finding(
            "grading", Status.SKIP, f"no problem with a mistake in {settings.content_dir}"
        )
    mistake = next((m for m in problem.mistakes if m.name == BANK_MISTAKE), problem.mistakes[0])
    started = time.monotonic()
    trusted = expected.load_or_compute(problem, device)
    limits = calibration.ensure(problem, device, lambda p, d: measure_reference(p, d))
    right = grade(
        problem, problem.reference_source, device=device, variant=0, trusted=trusted, limits=limits
    )
    wrong = grade(problem, mistake.source, device=device, variant=0, trusted=trusted, limits=limits)
    took = time.monotonic() - started
    said = (
        f"{problem.slug} on the {device}: the reference {right.verdict.value}"
        f" ({right.seconds:.1f} s), mistakes/{mistake.name}.py {wrong.verdict.value}"
        f" ({'diagnosed' if wrong.diagnosis == mistake.diagnosis else 'NOT diagnosed'});"
        f" limits {limits.cpu_seconds:g} s of CPU; {took:.0f} s in all"
    )
    diagnosed = wrong.verdict is Verdict.WRONG_ANSWER and wrong.diagnosis == mistake.diagnosis
    if right.verdict is Verdict.ACCEPTED and diagnosed:
        return Finding("grading", Status.PASS, said)
    return Finding(
        "grading",
        Status.FAIL,
        said,
        f"`jaxjudge check --device {device} {problem.slug}` says what differs on this device",
    )


CHECKS: tuple[tuple[str, Callable[[str], Finding]], ...] = (
    ("sandbox", lambda _device: _sandbox()),
    ("seccomp", lambda _device: _seccomp()),
    ("cgroups", _cgroups),
    ("gpu", _gpu),
    ("warm-up cache", _warmup_cache),
    ("inside a sandbox", _inside),
    ("grading", _grading),
)
NEEDS_A_SANDBOX = ("inside a sandbox", "grading")


def examine(device: str, report: Callable[[Finding], None]) -> list[Finding]:
    """Every check in order, each reported as it ends; the sandboxed ones are skipped
    when bubblewrap or the filter already failed (they would only fail again)."""
    findings: list[Finding] = []
    for name, check in CHECKS:
        if name in NEEDS_A_SANDBOX and any(
            f.status is Status.FAIL and f.check in ("sandbox", "seccomp") for f in findings
        ):
            finding = Finding(name, Status.SKIP, "no sandbox can start here (above)")
        else:
            try:
                finding = check(device)
            except Exception as error:  # a check that breaks is a failed check, said so
                finding = Finding(name, Status.FAIL, f"{type(error).__name__}: {error}")
        findings.append(finding)
        report(finding)
    return findings


def summary(findings: list[Finding]) -> str:
    counts = {status: sum(f.status is status for f in findings) for status in Status}
    return (
        f"{len(findings)} checks on {socket.gethostname()}: {counts[Status.PASS]} passed,"
        f" {counts[Status.WARN]} warned, {counts[Status.FAIL]} failed, {counts[Status.SKIP]} skipped"
    )
