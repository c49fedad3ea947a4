"""A course problem's author is not trusted: loading runs none of its code, its cases.py
runs in the learner sandbox and comes back as data, its reference and mistakes run in
sandboxes too, and what a hostile author's code tries (writing outside, reading another
course's problem, forking, eating memory, looping) is contained and reported. An
untrusted copy of a correct bank problem gives exactly what the trusted path gives."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grader import author_code, cli, expected
from grader.cases import CaseBank, same_value
from grader.check import check_problem
from grader.config import PROJECT_ROOT, settings
from grader.errors import CheckResultsMissingError, ProblemError
from grader.problems.problem import Problem, load_problem
from grader.running.launch import PlainLauncher
from grader.running.sandbox import bwrap_arguments
from grader.running.supervise import ProcessRunner
from tests.conftest import lean_copy

SLUG = "stable-logsumexp"  # the smallest bank problem: numpy cases, a one-line reference


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return lean_copy(SLUG, tmp_path)


@pytest.fixture(autouse=True)
def within_a_check() -> Iterator[None]:
    """These tests run an untrusted author's code as a check does (outside one, it never runs)."""
    with author_code.checking():
        yield


def untrusted(folder: Path) -> Problem:
    return load_problem(folder, trusted=False)


def prepend(path: Path, code: str) -> None:
    path.write_text(code + "\n" + path.read_text())


def same_bank(a: CaseBank, b: CaseBank) -> bool:
    pairs = list(zip(a.keyed(), b.keyed(), strict=True))
    return all(
        key == other_key
        and (case.sample, case.probe, case.note) == (other.sample, other.probe, other.note)
        and list(case.args) == list(other.args)
        and all(
            same_value(case.args[name], other.args[name])
            and type(case.args[name]) is type(other.args[name])
            for name in case.args
        )
        for (key, case), (other_key, other) in pairs
    )


def written_by_hostile_code(marker: str) -> list[Path]:
    """Every place on the host a hostile author's code aimed at, where a file exists."""
    places = [
        PROJECT_ROOT / "var" / marker,
        settings.data_dir / marker,
        Path("/tmp") / marker,
        settings.author_cases_dir / marker,
    ]
    return [place for place in places if place.exists()]


@pytest.mark.sandbox
def test_loading_runs_no_author_code_and_cases_run_only_in_the_sandbox(folder: Path) -> None:
    marker = f"jaxjudge-marker-{uuid.uuid4().hex}"
    prepend(folder / "cases.py", f"open('/tmp/{marker}', 'w').write('ran')")
    mistake = folder / "mistakes" / "batch_maximum.py"
    mistake.write_text(mistake.read_text() + f"\nopen('/tmp/{marker}', 'w')\n")
    problem = untrusted(folder)
    assert not problem.trusted and len(problem.mistakes) == 4  # docstrings read with ast
    started = time.monotonic()
    bank = problem.case_bank  # ran: in the sandbox, whose /tmp is its own
    assert time.monotonic() - started < 15
    assert bank.variants == 16 and len(bank.samples) == 2
    assert written_by_hostile_code(marker) == []
    imported_here = [
        name
        for name, module in list(sys.modules.items())
        if str(getattr(module, "__file__", None) or "").startswith(str(folder.parent.parent))
    ]
    assert imported_here == []  # nothing of the author's was imported in this process


@pytest.mark.sandbox
def test_an_untrusted_bank_copy_gives_the_trusted_case_bank_and_regimes(folder: Path) -> None:
    problem = untrusted(folder)
    trusted = load_problem(folder)
    assert same_bank(problem.case_bank, trusted.case_bank)
    assert problem.regime_answers == trusted.regime_answers
    assert same_bank(problem.cases_again(), trusted.case_bank)  # a second sandbox agrees


@pytest.mark.sandbox
def test_memory_probes_come_back_as_the_trusted_path_makes_them(tmp_path: Path) -> None:
    folder = lean_copy("memory-bounded-accumulation", tmp_path)  # the bank's memory budget
    problem = untrusted(folder)
    assert len(problem.case_bank.probes) >= 2
    assert same_bank(problem.case_bank, load_problem(folder).case_bank)


@pytest.mark.sandbox
@pytest.mark.parametrize(
    "regimes",
    [
        "def regimes():\n    return 5\n",
        "def regimes():\n    return {'far-from-zero': lambda args: args['missing']}\n",
    ],
    ids=["not-a-dict", "a-predicate-raises"],
)
def test_broken_regimes_read_the_same_from_the_sandbox(folder: Path, regimes: str) -> None:
    cases = folder / "cases.py"
    cases.write_text(cases.read_text().split("def regimes():")[0] + regimes)
    answers = untrusted(folder).regime_answers
    assert answers == load_problem(folder).regime_answers
    assert answers.invalid or answers.errors


@pytest.mark.sandbox
def test_the_bank_is_kept_per_content_hash_and_read_without_a_sandbox(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    untrusted(folder).case_bank  # noqa: B018  (generated once, in a sandbox)

    def no_sandbox(*_args: object) -> None:
        raise AssertionError("a sandbox was started for a bank already kept")

    monkeypatch.setattr(author_code, "_run", no_sandbox)
    assert untrusted(folder).case_bank.variants == 16
    (folder / "cases.py").write_text((folder / "cases.py").read_text() + "\n# changed\n")
    with pytest.raises(AssertionError, match="a sandbox was started"):
        untrusted(folder).case_bank  # noqa: B018  (new content: a new run)


@pytest.mark.sandbox
def test_outside_a_check_no_author_code_runs_and_a_restored_bank_is_read(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a check generated is all a grader uses: with the bank gone it fails closed,
    never starting a sandbox, until the stored bytes are restored (validated)."""
    checked = untrusted(folder)
    bank = checked.case_bank  # generated within a check (this module's fixture)
    stored = author_code.stored_bytes(checked)
    for kept in settings.author_cases_dir.glob(f"{checked.slug}-*.npz"):
        kept.unlink()

    def no_sandbox(*_args: object) -> None:
        raise AssertionError("the author's cases.py ran outside a check")

    monkeypatch.setattr(author_code, "_run", no_sandbox)
    token = author_code._checking.set(False)
    try:
        with pytest.raises(CheckResultsMissingError, match="must run the check again"):
            untrusted(folder).case_bank  # noqa: B018
        with pytest.raises(CheckResultsMissingError, match="device 'cpu'"):
            expected.load_or_compute(untrusted(folder))
        with pytest.raises(ProblemError, match="stored cases are malformed"):
            author_code.restore(untrusted(folder), b"not an archive")
        author_code.restore(untrusted(folder), stored)
        assert same_bank(untrusted(folder).case_bank, bank)
    finally:
        author_code._checking.reset(token)


def test_no_sandbox_binds_the_data_directory_where_banks_are_kept() -> None:
    args = bwrap_arguments(
        device="cpu", result_fd=3, memory_mb=2048, seccomp_fd=None, program="author_cases"
    )
    sources = [Path(args[i + 1]) for i, arg in enumerate(args) if arg in ("--ro-bind", "--bind")]
    caches = (settings.data_dir / "cache").resolve()  # banks, outputs, compiled programs
    assert [s for s in sources if s.resolve().is_relative_to(caches)] == []
    assert "from grader.child.author_cases import main" in args[-2]


HOSTILE_CASES = {
    "escape": """
import glob, os
written, read = [], []
for place in {places!r}:
    try:
        open(place, "w").write("escaped")
        written.append(place)
    except OSError:
        pass
for pattern in {secrets!r}:
    for path in glob.glob(pattern):
        try:
            read.append((path, len(open(path).read())))
        except OSError:
            pass
raise RuntimeError(f"wrote {{written}}, read {{read}}")
""",
    "fork": """
import os, time
children = []
try:
    for _ in range(4000):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        children.append(pid)
except OSError as error:
    raise RuntimeError(f"forked {{len(children)}}, then {{error}}")
""",
    "memory": """
import numpy as np
hog = np.ones(2 * 2**30 // 8)
""",
    "loop": """
while True:
    pass
""",
    "forged": """
import json, os, struct, sys
def frame(kind, meta):
    raw = json.dumps(meta).encode()
    return b"JJF1" + bytes([kind, 0, 0, 0]) + struct.pack("<IQ", len(raw), 0) + raw
os.write(int(sys.argv[1]), frame(11, {{"seed": 0, "cases": [{{"name": 1}}]}}) + frame(6, {{}}))
os._exit(0)
""",
    # Frames of metadata and no data, without end: each 256 KiB of "[]," is 5 MB of
    # Python lists in the parent, and only the data used to count towards the cap.
    "flood": """
import json, os, struct, sys
raw = json.dumps({{"seed": 0, "cases": [[]] * 60000}}).encode()
frame = b"JJF1" + bytes([11, 0, 0, 0]) + struct.pack("<IQ", len(raw), 0) + raw
with os.fdopen(int(sys.argv[1]), "wb") as channel:
    for _ in range(400):
        channel.write(frame)
os._exit(0)
""",
}


def hostile(folder: Path, kind: str, marker: str) -> None:
    places = [
        str(PROJECT_ROOT / "var" / marker),
        str(settings.data_dir / marker),
        f"/tmp/{marker}",
        str(settings.author_cases_dir / marker),
    ]
    secrets = [
        str(settings.data_dir / "**" / "reference_solutions" / "*.py"),
        str(settings.author_cases_dir / "*"),
        str(PROJECT_ROOT / "reference_solutions" / "*.py"),
        str(Path(settings.content_dir) / "problems" / "*" / "cases.py"),
    ]
    code = HOSTILE_CASES[kind].format(places=places, secrets=secrets)
    (folder / "cases.py").write_text(code + "\n" + (folder / "cases.py").read_text())


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("kind", "said"),
    [
        # What it wrote went to the sandbox's own /tmp (the host's paths below are
        # checked empty); nothing of the project or the data directory was readable.
        ("escape", r"cases\(\): raised RuntimeError: wrote \[.*\], read \[\] \(line 16\)"),
        ("fork", r"cases\(\): raised RuntimeError: forked \d+, then .*Resource temporarily"),
        ("memory", r"used more than the problem's 512 MB memory limit"),
        ("loop", r"did not finish within 3 s"),
        ("forged", r"its sandbox sent malformed data"),
        ("flood", r"its sandbox sent malformed data \(more than 20 frames"),
    ],
)
def test_hostile_cases_are_contained_and_reported(
    folder: Path, kind: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"jaxjudge-hostile-{uuid.uuid4().hex}"
    toml = folder / "problem.toml"
    toml.write_text(toml.read_text().replace("memory_mb = 2048", "memory_mb = 512"))
    monkeypatch.setattr(settings, "author_cases_seconds", 3.0 if kind == "loop" else 30.0)
    hostile(folder, kind, marker)
    with pytest.raises(ProblemError, match=said) as raised:
        untrusted(folder).case_bank  # noqa: B018
    assert raised.value.path == folder / "cases.py"
    assert written_by_hostile_code(marker) == []


@pytest.mark.sandbox
@pytest.mark.slow  # its sandbox imports JAX (and the first fills the warm-up cache)
def test_a_hostile_reference_runs_sandboxed_and_its_failure_is_the_checks_error(
    folder: Path,
) -> None:
    marker = f"jaxjudge-hostile-{uuid.uuid4().hex}"
    hostile(folder, "escape", marker)
    code = (folder / "cases.py").read_text().split("\n\n")[0]  # the escape attempt alone
    cases = folder / "cases.py"
    cases.write_text(cases.read_text().replace(code, "", 1))
    reference = folder.parent.parent / "reference_solutions" / f"{SLUG}.py"
    prepend(reference, code)
    problem = untrusted(folder)
    with pytest.raises(expected.ReferenceRunError, match=r"RuntimeError: wrote \[.*\], read \[\]"):
        expected.compute(problem, mistakes=False)
    assert written_by_hostile_code(marker) == []


@pytest.mark.sandbox
def test_the_command_line_checks_an_untrusted_folder_in_sandboxes(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = f"jaxjudge-marker-{uuid.uuid4().hex}"
    prepend(folder / "cases.py", f"open('/tmp/{marker}', 'w')\nraise SystemExit('stopped')")
    monkeypatch.setattr(settings, "content_dir", folder.parent.parent)
    assert cli.main(["check", "--untrusted", SLUG]) == 1
    assert "cases.py: cases(): raised SystemExit: stopped (line 2)" in capsys.readouterr().out
    assert written_by_hostile_code(marker) == []


def test_untrusted_runs_refuse_a_plain_process_and_file_their_outputs_apart(
    folder: Path,
) -> None:
    problem = untrusted(folder)
    with pytest.raises(expected.ReferenceRunError, match="never in a plain process"):
        expected.runner_for(problem, ProcessRunner(PlainLauncher(trusted=True)))
    assert expected.cache_key(problem, "cpu") != expected.cache_key(load_problem(folder), "cpu")


@pytest.mark.sandbox
@pytest.mark.slow
def test_an_untrusted_bank_copy_passes_check_with_the_trusted_outputs(folder: Path) -> None:
    lines: list[str] = []
    result = check_problem(folder, trusted=False, progress=lines.append)
    assert result.ok, result.errors
    stages = [line.split(":")[0] for line in lines if not line.startswith(" ")]
    assert stages == [
        "loaded 4 known mistake(s); the author is not trusted",
        "cases generated for 16 variants",
        "cases",
        "regimes",
        stages[4],
        "mistakes",
        "reference graded as a submission",
        "starter graded",
        "verdict",
    ]
    assert stages[4].startswith("reference and mistakes run on every variant in a sandbox")
    assert lines[-1].startswith("verdict: ok")
    assert sum("separation" in line for line in lines) >= 2  # each mistake's line
    sandboxed = expected.load_or_compute(untrusted(folder))  # what check left, from disk
    assert sandboxed.from_cache
    trusted = expected.compute(load_problem(folder))
    assert sandboxed.reference.keys() == trusted.reference.keys()
    for key, outputs in trusted.reference.items():
        for mine, theirs in zip(sandboxed.reference[key], outputs, strict=True):
            assert isinstance(mine, np.ndarray) and isinstance(theirs, np.ndarray)
            assert np.array_equal(mine, theirs, equal_nan=True), key
