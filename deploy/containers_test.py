"""`make containers-test`: docker-compose.yml started for real, with podman, and tested.

What it does, each step timed (docs/deployment.md, "Containers"):

1. installs podman, podman-compose, buildah, crun (runc where crun refuses the host's
   cgroups), fuse-overlayfs, netavark, aardvark-dns, iptables, catatonit (the
   containers' init) and mmdebstrap from Debian when missing (as root);
2. writes a private podman configuration (containers.conf, storage.conf, a seccomp
   profile) under the state folder and uses it through CONTAINERS_CONF and
   CONTAINERS_STORAGE_CONF, so nothing of the machine's own podman set-up is used or
   changed;
3. builds a Debian base image with mmdebstrap from Debian's packages (bookworm, whose
   python3 is 3.11, or trixie (3.13) when pyproject.toml's requires-python wants it; no
   registry is ever asked for an image), then on it the PostgreSQL image
   (deploy/containers/postgres.Containerfile) and the project's Dockerfile
   (``--build-arg BASE_IMAGE``), tagged ``jaxjudge:local`` as the compose file names it;
4. proves the least privileges a worker container needs for bubblewrap: the sandbox's own
   bubblewrap arguments fail without each of them, and a real grading is accepted with
   them alone;
5. runs docker-compose.yml with podman-compose (deploy/containers/compose.podman.yml
   replaces the PostgreSQL image): db (its healthcheck run until healthy), web, two
   workers; waits for /readyz;
6. creates a learner and an API token with the `jaxjudge` command in the web container;
   submits a correct and a wrong solution through the HTTP API and checks both verdicts;
7. submits again, finds the worker container holding the submission's lease in the
   database, kills it (SIGKILL) mid-grading, and checks the submission still gets one
   verdict, recorded once, after a second attempt;
8. tears everything down: containers, volumes, the network (built images stay cached
   unless --remove-images);
9. plays deploy/kubernetes/ with podman kube play on a node of its own (deploy/kube_play.py):
   the migration Job, the web and worker Deployments against a PostgreSQL pod, /readyz, a
   correct and a wrong submission, and a memory hog that must end memory_limit_exceeded
   inside the worker pod.

Runs as root on Debian. Exit status 0 when every check passed, 1 with the failing step
and the reason otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx2 as httpx
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
CONTAINERS = ROOT / "deploy" / "containers"
PODMAN_OVERRIDE = CONTAINERS / "compose.podman.yml"

PROJECT = "jaxjudge_ctest"
NETWORK = f"{PROJECT}_default"
SERVICES = ("db", "web", "worker-1", "worker-2")
WORKERS = ("worker-1", "worker-2")
POSTGRES_IMAGE = "localhost/jaxjudge-postgres:debian"  # as compose.podman.yml names it
APP_IMAGE = "localhost/jaxjudge:local"  # as docker-compose.yml names it (jaxjudge:local)
GPU_IMAGE = "localhost/jaxjudge-gpu:local"  # `make gpu-image` (deploy/containers/gpu.Containerfile)
# The Debian suites a base can be made of, with the python3 each has: the first one that
# pyproject.toml's requires-python accepts, unless --suite names one.
SUITES = {"bookworm": "3.11", "trixie": "3.13"}
PACKAGES = (
    "podman",
    "podman-compose",
    "buildah",
    "crun",
    "runc",
    "fuse-overlayfs",
    "netavark",
    "aardvark-dns",
    "iptables",
    "catatonit",  # the containers' init (docker-compose.yml, init: true)
    "mmdebstrap",
)
# bubblewrap sets the sandbox's hostname in its own UTS namespace; podman's default
# seccomp profile allows sethostname and setdomainname only with CAP_SYS_ADMIN.
UTS_SYSCALLS = ("sethostname", "setdomainname")
PODMAN_SECCOMP = Path("/usr/share/containers/seccomp.json")
CAP_SYS_RESOURCE = 24

LEARNER = "ctest-learner"
QUICK_PROBLEM = "scan-microbatched-grads"  # a correct and a wrong solution
WRONG_SOLUTION = ROOT / "problems" / QUICK_PROBLEM / "mistakes" / "mean_loss.py"
SLOW_PROBLEM = "train-with-accumulation"  # seconds of grading: time to kill its worker
READY_SECONDS = 600.0
VERDICT_SECONDS = 600.0

# The sandbox's own bubblewrap arguments (grader/running/sandbox.py), running /bin/true.
BWRAP_PROBE = (
    "import os; from grader.running.sandbox import bwrap_arguments; "
    "a = bwrap_arguments(device='cpu', result_fd=1, memory_mb=256, seccomp_fd=None); "
    "a = a[: a.index('--') + 1] + ['/bin/true']; os.execv(a[0], a)"
)


class TestFailedError(Exception):
    """A check failed: the message says what and, where it can, why."""


@dataclass
class Progress:
    """Step-by-step output with timings."""

    started: float = field(default_factory=time.monotonic)
    steps: list[tuple[str, float]] = field(default_factory=list)
    current: str = ""

    def clock(self) -> str:
        return f"[{time.monotonic() - self.started:7.1f}s]"

    @contextlib.contextmanager
    def step(self, title: str) -> Iterator[None]:
        self.current = title
        print(f"{self.clock()} {title} ...", flush=True)
        began = time.monotonic()
        yield
        took = time.monotonic() - began
        self.steps.append((title, took))
        print(f"{self.clock()} {title}: ok ({took:.1f} s)", flush=True)

    def note(self, message: str) -> None:
        print(f"{' ' * 11}  {message}", flush=True)


progress = Progress()


def run(
    args: Sequence[str],
    *,
    check: bool = True,
    input_text: str | None = None,
    timeout: float | None = 300,
    log: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command; output captured (or written to ``log``). A failure raises with the
    command and the end of what it printed."""
    try:
        if log is not None:
            with log.open("w") as out:
                done = subprocess.run(
                    list(args),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    text=True,
                    timeout=timeout,
                    check=False,
                )
            done.stdout = log.read_text(errors="replace")
        else:
            done = subprocess.run(
                list(args),
                input=input_text,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
    except subprocess.TimeoutExpired as error:
        raise TestFailedError(f"`{shlex.join(args)}` did not finish in {timeout:.0f} s") from error
    if check and done.returncode != 0:
        output = ((done.stdout or "") + (done.stderr or "")).strip()
        where = f" (whole output: {log})" if log else ""
        raise TestFailedError(
            f"`{shlex.join(args)}` exited with {done.returncode}{where}:\n{tail(output, 40)}"
        )
    return done


def tail(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[-lines:])


def podman(*args: str, check: bool = True, timeout: float | None = 300) -> str:
    return run(["podman", *args], check=check, timeout=timeout).stdout.strip()


# --- 1. Host packages --------------------------------------------------------------


def missing_packages() -> list[str]:
    missing = []
    for package in PACKAGES:
        status = run(["dpkg-query", "-W", "-f=${Status}", package], check=False)
        if status.returncode != 0 or "install ok installed" not in status.stdout:
            missing.append(package)
    return missing


def install_packages() -> None:
    if os.geteuid() != 0:
        raise TestFailedError(
            "run as root: podman here runs rootful (images, networks and the sandboxes' "
            "user namespaces as on a server)"
        )
    if shutil.which("apt-get") is None or shutil.which("dpkg-query") is None:
        raise TestFailedError("needs Debian's apt-get to install podman and mmdebstrap")
    missing = missing_packages()
    if missing:
        progress.note(f"installing from Debian: {' '.join(missing)}")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        ):
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise TestFailedError(
                    f"`{shlex.join(command)}` failed:\n{tail(done.stdout + done.stderr, 20)}"
                )
    said = run(["podman-compose", "version"], check=False).stdout
    compose = re.search(r"podman-compose\w* version\s+(\S+)", said)
    compose_version = f"podman-compose {compose.group(1) if compose else '(version unknown)'}"
    progress.note(f"{podman('--version')}; {compose_version}")


# --- 2. A private podman configuration ------------------------------------------------


@dataclass(frozen=True)
class Engine:
    """What the configuration chose, and why, for the summary."""

    runtime: str
    driver: str
    reasons: tuple[str, ...]


def hybrid_cgroups_with_v2_controllers() -> bool:
    """cgroup v1 with some controller (hugetlb, typically) left on the v2 hierarchy:
    crun 1.8 refuses to run there ("cgroups in hybrid mode not supported")."""
    unified = Path("/sys/fs/cgroup/unified/cgroup.controllers")
    return unified.is_file() and bool(unified.read_text().split())


def has_capability(number: int) -> bool:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> number & 1)
    return False


def containers_conf(runtime: str) -> tuple[str, list[str]]:
    reasons = [
        "cgroup_manager=cgroupfs (no systemd here to ask for cgroups)",
        "events_logger=file (no journald)",
        "network_backend=netavark (aardvark-dns resolves the services' names)",
    ]
    lines = ["[containers]"]
    if not has_capability(CAP_SYS_RESOURCE):
        # podman as root asks for RLIMIT_NOFILE 1048576 in every container, and keeps
        # RLIMIT_NPROC at 32768 for itself; without CAP_SYS_RESOURCE no process may
        # raise its hard limits, so the containers get what podman has.
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], 32768)
        lines.append(f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]')
        reasons.append(
            f"default_ulimits nofile={nofile}, nproc={nproc} (no CAP_SYS_RESOURCE here: "
            "a container may not get more than podman has)"
        )
    lines += [
        "",
        "[engine]",
        'cgroup_manager = "cgroupfs"',
        'events_logger = "file"',
        f'runtime = "{runtime}"',
        "",
        "[network]",
        'network_backend = "netavark"',
        "",
    ]
    return "\n".join(lines), reasons


def storage_conf(state: Path, driver: str) -> str:
    lines = [
        "[storage]",
        f'driver = "{"overlay" if driver == "fuse-overlayfs" else driver}"',
        f'runroot = "{state / "run"}"',
        f'graphroot = "{state / f"storage-{driver}"}"',
    ]
    if driver == "fuse-overlayfs":
        lines += ["", "[storage.options.overlay]", 'mount_program = "/usr/bin/fuse-overlayfs"']
    return "\n".join(lines) + "\n"


def uts_seccomp_profile(state: Path) -> Path:
    """podman's default seccomp profile, with sethostname and setdomainname allowed
    without CAP_SYS_ADMIN (they change the caller's UTS namespace only)."""
    profile = json.loads(PODMAN_SECCOMP.read_text())
    rules = []
    for rule in profile["syscalls"]:
        names = [name for name in rule["names"] if name not in UTS_SYSCALLS]
        if names:
            rules.append({**rule, "names": names})
    rules.append({"names": list(UTS_SYSCALLS), "action": "SCMP_ACT_ALLOW"})
    profile["syscalls"] = rules
    path = state / "seccomp-sandboxes.json"
    path.write_text(json.dumps(profile, indent=1) + "\n")
    return path


def configure(state: Path) -> Engine:
    config = state / "config"
    config.mkdir(parents=True, exist_ok=True)
    if hybrid_cgroups_with_v2_controllers():
        runtime = "runc"
        why = (
            "runtime=runc: cgroup v1 with a controller on the v2 hierarchy "
            "(/sys/fs/cgroup/unified), which crun 1.8 refuses"
        )
    else:
        runtime, why = "crun", "runtime=crun"
    text, reasons = containers_conf(runtime)
    (config / "containers.conf").write_text(text)
    os.environ["CONTAINERS_CONF"] = str(config / "containers.conf")
    os.environ["CONTAINERS_STORAGE_CONF"] = str(config / "storage.conf")
    failures = []
    for driver in ("overlay", "fuse-overlayfs", "vfs"):
        if driver == "fuse-overlayfs" and not Path("/dev/fuse").exists():
            failures.append("fuse-overlayfs: no /dev/fuse")
            continue
        (config / "storage.conf").write_text(storage_conf(state, driver))
        probe = run(["podman", "info", "--format", "{{.Store.GraphDriverName}}"], check=False)
        if probe.returncode == 0:
            break
        failures.append(f"{driver}: {tail(probe.stderr.strip(), 1)}")
    else:
        raise TestFailedError("no storage driver works here:\n" + "\n".join(failures))
    info = json.loads(podman("info", "--format", "json"))
    host = info["host"]
    progress.note(
        f"configuration in {config}: storage {driver} ({state / f'storage-{driver}'})"
        + (f" after {'; '.join(failures)}" if failures else "")
    )
    progress.note(
        f"cgroup v{host['cgroupVersion'][-1]} ({host['cgroupManager']}), "
        f"runtime {host['ociRuntime']['name']}, network {host.get('networkBackend', '?')}, "
        f"seccomp {'on' if host['security']['seccompEnabled'] else 'off'}, "
        f"AppArmor {'on' if host['security']['apparmorEnabled'] else 'off'}, "
        f"kernel {host['kernel']}"
    )
    for reason in (why, *reasons):
        progress.note(reason)
    return Engine(runtime, driver, (why, *reasons))


# --- 3. Images ---------------------------------------------------------------------


def debian_suite(requested: str | None) -> str:
    """The Debian suite whose python3 the project accepts (pyproject.toml)."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    allowed = SpecifierSet(requires)
    fitting = [suite for suite, python in SUITES.items() if allowed.contains(python)]
    if requested is not None and requested not in fitting:
        raise TestFailedError(
            f"Debian {requested}'s python3 is {SUITES.get(requested, '?')}, and pyproject.toml "
            f"requires Python {requires}"
        )
    if not fitting:
        known = ", ".join(f"{suite} ({python})" for suite, python in SUITES.items())
        raise TestFailedError(
            f"pyproject.toml requires Python {requires}: no Debian suite here has it ({known})"
        )
    suite = requested or fitting[0]
    progress.note(f"Debian {suite} (python3 {SUITES[suite]}; pyproject.toml: {requires})")
    return suite


def base_image(suite: str) -> str:
    return f"localhost/jaxjudge-debian:{suite}"


def image_exists(name: str) -> bool:
    return run(["podman", "image", "exists", name], check=False).returncode == 0


def build_base_image(state: Path, suite: str, *, rebuild: bool) -> None:
    image = base_image(suite)
    if image_exists(image) and not rebuild:
        progress.note(f"{image} cached (--rebuild-base makes it again)")
        return
    # The host's own certificate authorities go in too: where a TLS-inspecting proxy
    # stands between this machine and PyPI, pip in the image must trust it as the host does.
    hooks = []
    local_cas = Path("/usr/local/share/ca-certificates")
    if any(local_cas.glob("**/*.crt")):
        hooks = [
            f"--customize-hook=sync-in {local_cas} {local_cas}",
            '--customize-hook=chroot "$1" update-ca-certificates',
        ]
        progress.note(f"with the host's certificate authorities from {local_cas}")
    log = state / "logs" / "base-image.log"
    sources = [
        f"deb http://deb.debian.org/debian {suite} main",
        f"deb http://deb.debian.org/debian {suite}-updates main",
        f"deb http://deb.debian.org/debian-security {suite}-security main",
    ]
    mmdebstrap = ["mmdebstrap", "--variant=minbase", "--include=ca-certificates", *hooks]
    script = (
        f"set -o pipefail; {shlex.join([*mmdebstrap, suite, '-', *sources])}"
        f" | podman import --change 'CMD [\"/bin/bash\"]' - {image}"
    )
    run(["bash", "-c", script], log=log, timeout=1200)
    progress.note(f"{image}: mmdebstrap {suite} (minbase), imported (log: {log})")


def build_image(
    state: Path, suite: str, name: str, containerfile: Path, context: Path, *args: str
) -> None:
    log = state / "logs" / f"build-{name.split('/')[-1].replace(':', '-')}.log"
    run(
        [
            "podman",
            "build",
            "--network=host",
            "--build-arg",
            f"BASE_IMAGE={base_image(suite)}",
            *args,
            "--tag",
            name,
            "--file",
            str(containerfile),
            str(context),
        ],
        log=log,
        timeout=3600,
    )
    cached = log.read_text().count("Using cache")
    size = podman("image", "inspect", "--format", "{{.Size}}", name)
    progress.note(f"{name}: {int(size) / 1e9:.2f} GB, {cached} cached steps (log: {log})")


def gpu_image(state: Path, suite: str) -> None:
    """``make gpu-image``: deploy/containers/gpu.Containerfile on the app image. Without a
    GPU here, what is checked is what it holds: the plugin, at jaxlib's version."""
    containerfile = CONTAINERS / "gpu.Containerfile"
    build_image(
        state, suite, GPU_IMAGE, containerfile, CONTAINERS, "--build-arg", f"APP_IMAGE={APP_IMAGE}"
    )
    versions = run(
        [
            *("podman", "run", "--rm", GPU_IMAGE, "python", "-c"),
            "import importlib.metadata as m; print(m.version('jaxlib'), m.version('jax-cuda13-plugin'))",
        ],
        timeout=120,
    ).stdout.split()
    if len(versions) != 2 or versions[0] != versions[1]:
        raise TestFailedError(f"{GPU_IMAGE}: jaxlib and jax-cuda13-plugin differ: {versions}")
    progress.note(
        f"{GPU_IMAGE}: jax-cuda13-plugin {versions[1]} beside jaxlib {versions[0]}; it needs"
        " an NVIDIA driver and its container toolkit to run (none here)"
    )


# --- 4. Least privilege for the sandboxes -------------------------------------------------


def privileges(seccomp_profile: Path) -> list[str]:
    """The least set of options a worker container needs under podman, each proven
    necessary, the set proven sufficient by a real grading."""
    least = [f"seccomp={seccomp_profile}", "unmask=/proc/*"]

    def probe(options: Sequence[str]) -> subprocess.CompletedProcess[str]:
        flags = [f"--security-opt={option}" for option in options]
        return run(
            ["podman", "run", "--rm", *flags, APP_IMAGE, "python", "-c", BWRAP_PROBE],
            check=False,
            timeout=120,
        )

    expected = {
        "unmask=/proc/*": "Can't mount proc",  # without it: podman's masked /proc paths
        f"seccomp={seccomp_profile}": "Can't set hostname",  # podman's default profile
    }
    for option, message in expected.items():
        without = [other for other in least if other != option]
        done = probe(without)
        said = (done.stdout + done.stderr).strip()
        if done.returncode == 0 or message not in said:
            raise TestFailedError(
                f"expected bubblewrap to fail with {message!r} without {option}; "
                f"exit {done.returncode}: {said or '(nothing printed)'}"
            )
        progress.note(f"without {option.split('=')[0]}: {tail(said, 1)}")
    done = probe(least)
    if done.returncode != 0:
        raise TestFailedError(
            f"the sandbox's bubblewrap fails with {least}: {(done.stdout + done.stderr).strip()}"
        )
    flags = [f"--security-opt={option}" for option in least]
    solution = f"reference_solutions/{QUICK_PROBLEM}.py"
    graded = run(
        [
            *("podman", "run", "--rm", *flags, APP_IMAGE),
            *("jaxjudge", "grade", QUICK_PROBLEM, solution, "--samples-only", "--json"),
        ],
        check=False,
        timeout=300,
    )
    try:
        verdict = json.loads(graded.stdout.strip().splitlines()[-1])["verdict"]
    except (IndexError, ValueError, KeyError):
        verdict = None
    if verdict != "accepted":
        raise TestFailedError(
            f"a real grading with only {least} was not accepted:\n"
            f"{tail(graded.stdout + graded.stderr, 20)}"
        )
    limits = [line for line in graded.stderr.splitlines() if "sandbox limits:" in line]
    progress.note(f"with {' and '.join(least)} alone: bubblewrap starts, a grading is accepted")
    if limits:
        progress.note(f"limits inside a container: {limits[0].split('sandbox limits: ', 1)[1]}")
    return least


# --- 5. The stack ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Stack:
    state: Path
    port: int
    env: dict[str, str]

    @classmethod
    def new(cls, state: Path) -> Stack:
        env = {
            **os.environ,
            "POSTGRES_PASSWORD": secrets.token_urlsafe(18),
            "JAXJUDGE_SECRET_KEY": secrets.token_urlsafe(32),
            "JAXJUDGE_HTTP_PORT": str(free_port()),
        }
        return cls(state, int(env["JAXJUDGE_HTTP_PORT"]), env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def compose(self, *args: str, log_name: str, timeout: float = 600) -> None:
        command = ["podman-compose", "-p", PROJECT, "-f", str(COMPOSE_FILE)]
        command += ["-f", str(PODMAN_OVERRIDE), *args]
        log = self.state / "logs" / f"compose-{log_name}.log"
        with log.open("w") as out:
            done = subprocess.run(
                command,
                env=self.env,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
        # podman-compose 1.0.3 exits 0 even when a container failed to start: the
        # containers' own states are checked by the caller.
        if done.returncode != 0:
            raise TestFailedError(
                f"`{shlex.join(command)}` exited with {done.returncode} (log: {log}):\n"
                f"{tail(log.read_text(), 30)}"
            )

    @staticmethod
    def container(service: str) -> str:
        return f"{PROJECT}_{service}_1"

    def state_of(self, service: str) -> str:
        return podman(
            "inspect", "--format", "{{.State.Status}}", self.container(service), check=False
        )

    def logs(self, service: str) -> str:
        done = run(["podman", "logs", self.container(service)], check=False)
        return done.stdout + done.stderr

    def sql(self, query: str) -> list[list[str]]:
        done = run(
            [
                *("podman", "exec", self.container("db")),
                *("psql", "-U", "jaxjudge", "-d", "jaxjudge", "-AtF", "|", "-c", query),
            ],
            timeout=30,
        )
        return [line.split("|") for line in done.stdout.splitlines() if line]


def save_logs(stack: Stack) -> None:
    """Every container's output, kept in the logs folder after the teardown."""
    for service in SERVICES:
        if stack.state_of(service):
            (stack.state / "logs" / f"{service}.log").write_text(stack.logs(service))


def teardown(stack: Stack, *, quiet: bool = False) -> None:
    """Containers, volumes and the network of this project; images stay."""
    stack.compose("down", "--volumes", log_name="down", timeout=300)
    run(["podman", "network", "rm", "--force", NETWORK], check=False)
    label = f"label=io.podman.compose.project={PROJECT}"
    left = {
        "containers": podman("ps", "--all", "--quiet", "--filter", label),
        "volumes": podman("volume", "ls", "--quiet", "--filter", label),
        "networks": podman("network", "ls", "--quiet", "--filter", f"name=^{NETWORK}$"),
    }
    remaining = {kind: names.split() for kind, names in left.items() if names}
    if remaining:
        raise TestFailedError(f"teardown left {remaining}")
    if not quiet:
        progress.note("no container, volume or network of the project is left")


def start_stack(stack: Stack) -> None:
    # db first, until its own healthcheck passes: podman runs healthchecks on systemd
    # timers, and there is no systemd here, so `condition: service_healthy` is done by
    # hand (podman-compose 1.0.3 only orders the start).
    stack.compose("up", "--detach", "--no-build", "db", log_name="up-db")
    deadline = time.monotonic() + 120
    db = stack.container("db")
    while True:
        check = run(["podman", "healthcheck", "run", db], check=False)
        if check.returncode == 0:
            break
        if time.monotonic() > deadline or stack.state_of("db") not in ("running", "created"):
            raise TestFailedError(
                f"the database never became healthy ({stack.state_of('db')}):\n"
                f"{tail(stack.logs('db'), 20)}"
            )
        time.sleep(0.5)
    progress.note("db: healthy (the compose file's pg_isready healthcheck)")
    stack.compose("up", "--detach", "--no-build", log_name="up")
    for service in SERVICES:
        status = stack.state_of(service)
        if status != "running":
            raise TestFailedError(
                f"{service} is {status or 'missing'} after `podman-compose up`:\n"
                f"{tail(stack.logs(service), 20)}"
            )
    options = podman(
        "inspect", "--format", "{{json .HostConfig.SecurityOpt}}", stack.container("worker-1")
    )
    progress.note(f"all four containers running; the workers' security options: {options}")


def wait_ready(stack: Stack) -> None:
    deadline = time.monotonic() + READY_SECONDS
    last = "no answer"
    with httpx.Client(timeout=10) as client:
        while time.monotonic() < deadline:
            try:
                answer = client.get(f"{stack.url}/readyz")
                last = f"{answer.status_code} {answer.text}"
                if answer.status_code == 200:
                    workers = answer.json()["workers"]
                    names = ", ".join(str(w["name"]) for w in workers)
                    progress.note(f"/readyz 200 with {len(workers)} grading process(es): {names}")
                    return
            except httpx.HTTPError as error:
                last = f"{type(error).__name__}: {error}"
            for service in SERVICES:
                if stack.state_of(service) != "running":
                    raise TestFailedError(
                        f"{service} stopped while waiting for /readyz:\n"
                        f"{tail(stack.logs(service), 30)}"
                    )
            time.sleep(2)
    raise TestFailedError(f"/readyz not ready after {READY_SECONDS:.0f} s; last answer: {last}")


def workers_limits(stack: Stack) -> None:
    for service in WORKERS:
        for line in stack.logs(service).splitlines():
            if "sandbox limits:" in line:
                progress.note(f"{service}: {line.split('sandbox limits: ', 1)[1][:160]}")
                break


# --- 6. A learner, two verdicts ------------------------------------------------------


def create_learner(stack: Stack) -> str:
    return create_learner_with(["podman", "exec", "-i", stack.container("web")])


def create_learner_with(in_web: list[str]) -> str:
    """A learner and an API token, by the `jaxjudge` command run with ``in_web`` (the
    exec into a web container)."""
    password = secrets.token_urlsafe(16)
    run(
        [
            *in_web,
            *("jaxjudge", "users", "create", LEARNER, "--role", "learner", "--password-stdin"),
        ],
        input_text=password + "\n",
        timeout=120,
    )
    token = run(
        [*in_web, "jaxjudge", "tokens", "create", LEARNER, "--label", "ctest"],
        timeout=120,
    ).stdout.split()
    if not token:
        raise TestFailedError("`jaxjudge tokens create` printed no token")
    progress.note(f"learner {LEARNER!r} and an API token, by `jaxjudge` in the web container")
    return token[-1]


def submit(client: httpx.Client, problem: str, code: str) -> int:
    answer = client.post("/api/submissions", json={"problem": problem, "code": code})
    if answer.status_code not in (200, 201, 202):
        raise TestFailedError(
            f"POST /api/submissions for {problem}: {answer.status_code} {answer.text}"
        )
    submission_id: int = answer.json()["id"]
    return submission_id


def verdict_of(client: httpx.Client, submission_id: int) -> dict[str, object]:
    deadline = time.monotonic() + VERDICT_SECONDS
    while time.monotonic() < deadline:
        answer = client.get(f"/api/submissions/{submission_id}")
        if answer.status_code != 200:
            raise TestFailedError(
                f"GET /api/submissions/{submission_id}: {answer.status_code} {answer.text}"
            )
        body: dict[str, object] = answer.json()
        if body["status"] == "done":
            return body
        time.sleep(0.5)
    raise TestFailedError(f"submission {submission_id}: no verdict in {VERDICT_SECONDS:.0f} s")


def two_verdicts(client: httpx.Client) -> None:
    correct = (ROOT / "reference_solutions" / f"{QUICK_PROBLEM}.py").read_text()
    for label, code, expected in (
        ("correct", correct, "accepted"),
        ("wrong", WRONG_SOLUTION.read_text(), "wrong_answer"),
    ):
        began = time.monotonic()
        submission_id = submit(client, QUICK_PROBLEM, code)
        body = verdict_of(client, submission_id)
        if body["verdict"] != expected:
            raise TestFailedError(
                f"the {label} solution of {QUICK_PROBLEM} (submission {submission_id}) got "
                f"{body['verdict']!r}, expected {expected!r}: {body.get('message')}"
            )
        progress.note(
            f"{label} solution: submission {submission_id} {body['verdict']} "
            f"({time.monotonic() - began:.1f} s from POST to verdict)"
        )


# --- 7. A worker killed mid-grading ---------------------------------------------------


def hostnames(stack: Stack) -> dict[str, str]:
    return {
        podman("inspect", "--format", "{{.Config.Hostname}}", stack.container(name)): name
        for name in WORKERS
    }


VERDICT_LINE = r"\bsubmission {id}: (\w+)(.*)$"


def recorded_verdicts(stack: Stack, submission_id: int) -> dict[str, list[str]]:
    """Each worker's log lines that recorded a verdict for the submission."""
    pattern = re.compile(VERDICT_LINE.format(id=submission_id), re.M)
    found = {}
    for service in WORKERS:
        found[service] = [
            verdict
            for verdict, rest in pattern.findall(stack.logs(service))
            if "dropped" not in rest
        ]
    return found


def kill_mid_grading(stack: Stack, client: httpx.Client) -> None:
    code = (ROOT / "reference_solutions" / f"{SLOW_PROBLEM}.py").read_text()
    submission_id = submit(client, SLOW_PROBLEM, code)
    by_host = hostnames(stack)
    deadline = time.monotonic() + VERDICT_SECONDS
    holder = None
    while holder is None:
        rows = stack.sql(
            f"select status, coalesce(lease_owner, ''), attempts from submissions "
            f"where id = {submission_id}"
        )
        status, owner, attempts = rows[0]
        if status == "done":
            raise TestFailedError(
                f"submission {submission_id} of {SLOW_PROBLEM} was graded before a worker "
                "could be killed: pick a slower problem (SLOW_PROBLEM)"
            )
        if status == "running" and owner:
            host = owner.split(":", 1)[0]
            if host not in by_host:
                raise TestFailedError(f"lease owner {owner!r} is none of the workers {by_host}")
            holder = by_host[host]
        elif time.monotonic() > deadline:
            raise TestFailedError(f"submission {submission_id} was never claimed")
        else:
            time.sleep(0.2)
    progress.note(
        f"submission {submission_id} ({SLOW_PROBLEM}) leased by {holder} "
        f"(lease owner {owner}, attempt {attempts})"
    )
    podman("kill", "--signal", "KILL", stack.container(holder))
    killed_at = time.monotonic()
    progress.note(f"{holder} killed (SIGKILL) mid-grading")
    try:
        body = verdict_of(client, submission_id)
    except TestFailedError as error:
        status, owner, attempts = stack.sql(
            f"select status, coalesce(lease_owner, '-'), attempts from submissions "
            f"where id = {submission_id}"
        )[0]
        now = by_host.get(owner.split(":", 1)[0], owner)
        logs = "\n\n".join(f"{service}:\n{tail(stack.logs(service), 12)}" for service in WORKERS)
        raise TestFailedError(
            f"{error} after {holder} was killed: the row is {status}, attempt {attempts}, "
            f"lease held by {now}\n{logs}"
        ) from None
    waited = time.monotonic() - killed_at
    rows = stack.sql(
        "select status, coalesce(verdict, ''), attempts, coalesce(lease_owner, ''), "
        f"finished_at is not null from submissions where id = {submission_id}"
    )
    status, verdict, attempts, owner, finished = rows[0]
    recorded = recorded_verdicts(stack, submission_id)
    everywhere = [v for verdicts in recorded.values() for v in verdicts]
    problems = []
    if body["verdict"] != "accepted" or verdict != "accepted":
        problems.append(f"verdict {body['verdict']!r} (API), {verdict!r} (database)")
    if (status, owner, finished) != ("done", "", "t"):
        problems.append(f"row status={status} lease_owner={owner!r} finished={finished}")
    if attempts != "2":
        problems.append(f"{attempts} attempt(s) recorded, expected 2 (killed one, survivor)")
    if everywhere != ["accepted"]:
        problems.append(f"verdicts recorded in the workers' logs: {recorded}")
    if problems:
        raise TestFailedError(
            f"submission {submission_id} after its worker was killed: " + "; ".join(problems)
        )
    survivor = next(service for service, verdicts in recorded.items() if verdicts)
    restarted = podman(
        "inspect", "--format", "{{.State.Status}} {{.RestartCount}}", stack.container(holder)
    )
    progress.note(
        f"graded once: {verdict} by {survivor}, {waited:.1f} s after the kill, attempt 2 of the "
        f"same row; {holder} is now {restarted.split()[0]} (restarts: {restarted.split()[1]})"
    )


# --- Main ------------------------------------------------------------------------


def summary(started: float) -> None:
    total = time.monotonic() - started
    print(f"\ncontainers-test: passed in {total:.0f} s ({total / 60:.1f} min)")
    for title, took in progress.steps:
        print(f"  {took:7.1f} s  {title}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Start docker-compose.yml with podman and test it (docs/deployment.md)."
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=Path(os.environ.get("JAXJUDGE_CONTAINERS_STATE", "/var/lib/jaxjudge-ctest")),
        help="podman's private configuration, image storage and logs",
    )
    parser.add_argument(
        "--rebuild-base", action="store_true", help="make the mmdebstrap base image again"
    )
    parser.add_argument(
        "--suite",
        choices=sorted(SUITES),
        default=None,
        help="the Debian suite of the base (default: the first whose python3 pyproject.toml accepts)",
    )
    parser.add_argument(
        "--remove-images", action="store_true", help="remove the built images at the end"
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave the stack running at the end (no teardown)"
    )
    parser.add_argument(
        "--gpu-image",
        action="store_true",
        help="build the images and the GPU worker image on them, check its plugin, and stop",
    )
    args = parser.parse_args(argv)
    state: Path = args.state_dir.resolve()
    (state / "logs").mkdir(parents=True, exist_ok=True)
    stack: Stack | None = None
    started = time.monotonic()
    try:
        with progress.step("1/9 host packages"):
            install_packages()
        with progress.step("2/9 podman configuration"):
            configure(state)
            seccomp_profile = uts_seccomp_profile(state)
            stack = Stack.new(state)
            teardown(stack, quiet=True)  # what an interrupted run left
        with progress.step("3/9 images (mmdebstrap base, PostgreSQL, jaxjudge)"):
            suite = debian_suite(args.suite)
            build_base_image(state, suite, rebuild=args.rebuild_base)
            postgres = CONTAINERS / "postgres.Containerfile"
            build_image(state, suite, POSTGRES_IMAGE, postgres, CONTAINERS)
            build_image(state, suite, APP_IMAGE, ROOT / "Dockerfile", ROOT)
        if args.gpu_image:
            with progress.step("the GPU worker image (jax's CUDA plugin at the pinned jax)"):
                gpu_image(state, suite)
            summary(started)
            return 0
        with progress.step("4/9 least privilege for bubblewrap in a container"):
            privileges(seccomp_profile)
        with progress.step("5/9 podman-compose up: db, web, worker-1, worker-2; /readyz"):
            start_stack(stack)
            wait_ready(stack)
            workers_limits(stack)
        with httpx.Client(base_url=stack.url, timeout=30) as client:
            with progress.step("6/9 a learner; a correct and a wrong solution through the API"):
                client.headers["Authorization"] = f"Bearer {create_learner(stack)}"
                two_verdicts(client)
            with progress.step("7/9 a worker killed mid-grading: graded exactly once"):
                kill_mid_grading(stack, client)
        if args.keep:
            progress.note(f"--keep: the stack is left running at {stack.url}")
        else:
            with progress.step("8/9 teardown (containers, volumes, network)"):
                save_logs(stack)
                teardown(stack)
        with progress.step("9/9 deploy/kubernetes played with podman kube play"):
            from kube_play import NODE_IMAGE, play_manifests

            play_manifests(state, suite)
        if args.remove_images:
            node_image = NODE_IMAGE.format(suite=suite)
            for image in (APP_IMAGE, POSTGRES_IMAGE, node_image, base_image(suite)):
                podman("rmi", "--force", image, check=False)
            progress.note("images removed (--remove-images)")
    except (TestFailedError, KeyboardInterrupt) as error:
        reason = "interrupted" if isinstance(error, KeyboardInterrupt) else str(error)
        print(f"\ncontainers-test: FAILED at {progress.current!r}:\n{reason}", file=sys.stderr)
        if stack is not None:
            with contextlib.suppress(TestFailedError):
                save_logs(stack)
                if not args.keep:
                    teardown(stack, quiet=True)
        print(f"logs: {state / 'logs'}", file=sys.stderr)
        return 1
    summary(started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
