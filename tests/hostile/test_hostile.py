"""Every attack in attacks/ gets its annotated verdict and achieves nothing on the host."""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grader import expected
from grader.cases import case_key
from grader.child.verdicts import Verdict
from grader.config import PROJECT_ROOT
from grader.grade import grade
from grader.judging.feedback import learner_view
from grader.judging.report import GradeReport
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold
from grader.running.pool import WarmPool
from grader.running.sandbox import SandboxLauncher

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.xdist_group("hostile")]

ATTACKS = sorted((Path(__file__).parent / "attacks").glob("*.py"))
MARKER = "jaxjudge-hostile"
ENV_CANARY = f"env-canary-{uuid.uuid4().hex}"
REFERENCE_CANARY = f"reference-canary-{uuid.uuid4().hex}"
CORRECT = "def solve(x, scale):\n    return x * scale\n"
PROBE = (
    "import os, sys\n"
    "for d in ('/tmp', '/dev/shm', '/var/tmp', os.path.expanduser('~'), os.getcwd()):\n"
    "    try:\n        print(d, sorted(os.listdir(d)))\n    except OSError as e:\n        print(d, e)\n"
    "import numpy\nprint('numpy from', numpy.__file__)\n" + CORRECT
)
HOST_PLACES = [
    Path("/tmp"),
    Path("/dev/shm"),
    Path("/var/tmp"),
    Path.home(),
    PROJECT_ROOT,
    Path(sys.prefix),
]


def header(path: Path, key: str) -> str:
    found = re.search(rf"^# {key}: (.+)$", path.read_text(), re.MULTILINE)
    assert found, f"{path.name} lacks a '# {key}:' line"
    return found.group(1).strip()


class Listener:
    """TCP and UDP on 127.0.0.1 (and TCP on ::1 where possible), recording any contact."""

    def __init__(self) -> None:
        self.contacts: list[str] = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.sockets = [self.tcp, self.udp]
        try:
            tcp6 = socket.create_server(("::1", self.port), family=socket.AF_INET6)
            self.sockets.append(tcp6)
        except OSError:
            pass
        for sock in self.sockets:
            sock.settimeout(0.2)
            threading.Thread(target=self._watch, args=(sock,), daemon=True).start()

    def _watch(self, sock: socket.socket) -> None:
        while True:
            try:
                if sock.type == socket.SOCK_DGRAM:
                    data, peer = sock.recvfrom(4096)
                    self.contacts.append(f"udp from {peer}: {data!r}")
                else:
                    connection, peer = sock.accept()
                    self.contacts.append(f"tcp from {peer}")
                    connection.close()
            except TimeoutError:
                continue
            except OSError:
                return

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("hostile")
    scaffold("tiny", root)
    toml = root / "problems" / "tiny" / "problem.toml"
    # Short limits, as a small exercise would have: every time-out attack costs its limit
    # twice (once more on a quiet child, with 4x the wall clock, while the machine is busy).
    text = toml.read_text().replace("wall_seconds = 30", "wall_seconds = 3")
    toml.write_text(text.replace("cpu_seconds = 10", "cpu_seconds = 2"))
    reference = root / "reference_solutions" / "tiny.py"
    reference.write_text(f"# {REFERENCE_CANARY}\n" + reference.read_text())
    return load_problem(root / "problems" / "tiny")


@pytest.fixture(scope="module")
def pool() -> Iterator[WarmPool]:
    os.environ["JAXJUDGE_HOSTILE_CANARY"] = ENV_CANARY  # in the grading process only
    warm = WarmPool(SandboxLauncher(warm_up=True), size=2, memory_mb=2048)
    yield warm
    warm.close()
    os.environ.pop("JAXJUDGE_HOSTILE_CANARY", None)


def marker_files() -> list[str]:
    found = []
    for place in HOST_PLACES:
        try:
            found += [str(place / name) for name in os.listdir(place) if MARKER in name]
        except OSError:
            continue
    for site in Path(sys.prefix).glob("lib/python*/site-packages"):
        found += [
            str(site / name)
            for name in ("sitecustomize.py", "jaxjudge_hostile.pth")
            if (site / name).exists()
        ]
    return found


def marker_processes() -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if MARKER in text and "pytest" not in text:
            found.append(f"{cmdline.parent.name}: {text[:120]}")
    return found


def assert_nothing_leaked(report: GradeReport) -> None:
    text = json.dumps(report.to_json())
    # Stored as UTF-8 and read back whole (a lone surrogate from the sandbox would not be).
    stored = json.dumps(report.to_json(), ensure_ascii=False).encode("utf-8")
    assert GradeReport.from_stored(stored.decode("utf-8")) is not None
    assert ENV_CANARY not in text, "the grading process's environment leaked into the verdict"
    assert REFERENCE_CANARY not in text, "the reference leaked into the verdict"


def hidden_needles(problem: Problem, variant: int) -> list[str]:
    """Every hidden input and expected value of the variant, as a learner's print would show it."""
    trusted = expected.load_or_compute(problem)
    needles = []
    for case in problem.case_bank.for_variant(variant):
        arrays = [np.asarray(v) for v in case.args.values()]
        arrays += [
            o for o in trusted.reference[case_key(case, variant)] if isinstance(o, np.ndarray)
        ]
        for array in arrays:
            for value in array.ravel():
                text = repr(float(value))
                if len(text.strip("-0.")) >= 5:  # digits enough not to match by chance
                    needles.append(text[:9])
    return needles


def assert_hidden_cases_silent(problem: Problem, report: GradeReport) -> None:
    """What the learner sees of a hidden case is its verdict class, nothing computed from it."""
    view = learner_view(report)
    for case in view.cases:
        if not case.hidden:
            continue
        numbers = (case.seconds, case.max_abs_error, case.max_rel_error)
        assert numbers == (None, None, None), f"{case.name}: a hidden case shows a number"
        assert (case.inputs, case.expected, case.actual) == (None, None, None)
        # Nothing the learner's code chose: not its shape, a leaf, an exception's name.
        assert (case.actual_shape, case.leaf, case.exception) == (None, None, None)
        assert len(case.message) < 200
    assert view.variant is None and view.hidden_output == ""
    assert view.seconds is None or report.variant is None  # no whole-run time with hidden cases
    if report.variant is not None:
        text = json.dumps(view.to_json())
        for needle in hidden_needles(problem, report.variant):
            assert needle not in text, f"a hidden value ({needle}...) reached the learner"


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda p: p.stem)
def test_attack(attack: Path, tiny: Problem, pool: WarmPool, listener: Listener) -> None:
    source = attack.read_text().replace("PORT", str(listener.port))
    allowed = {Verdict(v.strip()) for v in header(attack, "expect").split("|")}
    effect = header(attack, "effect")
    before = set(marker_files())

    report = grade(tiny, source, runner=pool)

    assert report.verdict in allowed, (
        f"{report.verdict}: {report.message}\n{[(c.name, c.verdict, c.message[:300]) for c in report.cases]}"
    )
    if report.verdict is not Verdict.ACCEPTED:
        assert report.score < 1.0
    assert_nothing_leaked(report)
    assert_hidden_cases_silent(tiny, report)
    assert set(marker_files()) - before == set(), "a file was written outside the sandbox"
    deadline = time.monotonic() + 3.0
    while marker_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker_processes() == [], "a process outlived the sandbox"
    assert listener.contacts == [], "the sandbox reached a listener on the host's loopback"
    if effect == "persist":
        probe = grade(tiny, PROBE, runner=pool)
        assert probe.verdict is Verdict.ACCEPTED, probe.message
        assert MARKER not in probe.stdout, "the next submission saw what the attack left behind"


def test_canaries_are_really_there(tiny: Problem) -> None:
    # Guards the guards: the canaries the attacks look for exist on the trusted side.
    assert REFERENCE_CANARY in tiny.reference_source
    assert os.environ.get("JAXJUDGE_HOSTILE_CANARY") == ENV_CANARY


def test_a_correct_submission_is_accepted_after_the_suite(tiny: Problem, pool: WarmPool) -> None:
    assert grade(tiny, CORRECT, runner=pool).verdict is Verdict.ACCEPTED
    assert grade(tiny, CORRECT).verdict is Verdict.ACCEPTED  # a cold sandbox too
