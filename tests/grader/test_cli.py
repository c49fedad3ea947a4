"""The CLI contract: exit codes, one JSON object, one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import calibration
from grader.cli import main
from grader.config import PROJECT_ROOT, settings
from grader.problems.problem import load_problem
from grader.versions import CPU_XLA_FLAGS

JAXJUDGE = [sys.executable, "-m", "grader.cli"]  # the grader alone: no web app needed
REFERENCE = PROJECT_ROOT / "reference_solutions" / "scan-microbatched-grads.py"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAXJUDGE_DATA_DIR": str(settings.data_dir)}
    return subprocess.run(
        [*JAXJUDGE, *args], capture_output=True, text=True, env=env, cwd=PROJECT_ROOT, check=False
    )


@pytest.mark.slow
@pytest.mark.sandbox
def test_grade_json_prints_exactly_one_object_and_exits_zero_when_accepted() -> None:
    completed = run_cli("grade", "scan-microbatched-grads", str(REFERENCE), "--json")
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout)  # the whole stdout is one JSON document
    assert {
        "problem",
        "verdict",
        "score",
        "cases",
        "diagnosis",
        "stdout",
        "versions",
        "seconds",
    } <= report.keys()
    assert report["verdict"] == "accepted"
    assert report["score"] == 1.0
    # The runtime it ran on: the pinned jax, and the XLA flags children get.
    pinned = re.search(r'"jax==([^"]+)"', (PROJECT_ROOT / "pyproject.toml").read_text())
    assert pinned is not None and report["versions"]["jax"] == pinned.group(1)
    assert report["versions"]["xla_flags"] == CPU_XLA_FLAGS
    # Graded under this machine's calibrated limits, measured first if nobody had.
    problem = load_problem(PROJECT_ROOT / "problems" / "scan-microbatched-grads")
    calibrated = calibration.load(problem, "cpu")
    assert calibrated is not None
    assert report["cpu_limit_seconds"] == calibrated.limits(problem).cpu_seconds
    case = report["cases"][0]
    assert {
        "name",
        "hidden",
        "verdict",
        "max_abs_error",
        "max_rel_error",
        "expected_shape",
        "actual_shape",
        "seconds",
        "message",
    } <= case.keys()


@pytest.mark.slow
@pytest.mark.sandbox
def test_grade_exits_one_with_a_readable_report_when_not_accepted(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "def microbatched_grads(w, b, x_full, y_full, n_microbatches):\n    return 0.0\n"
    )
    completed = run_cli("grade", "scan-microbatched-grads", str(wrong))
    assert completed.returncode == 1
    assert "scan-microbatched-grads: Wrong answer" in completed.stdout
    assert "expected:" in completed.stdout  # sample values are shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["grade", "no-such-problem", "x.py"],
            "unknown problem 'no-such-problem'; known problems: data-parallel-accumulation,"
            " dropout-per-microbatch, ema-with-scan,",
        ),
        (["grade", "scan-microbatched-grads", "/nonexistent.py"], "/nonexistent.py: no such file"),
        (["grade", "scan-microbatched-grads", "/"], "/: is a directory"),
        (["check", "../etc"], "unknown problem '../etc'"),
    ],
)
def test_misuse_exits_two_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_binary_and_oversized_files_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00def")
    assert main(["grade", "scan-microbatched-grads", str(binary)]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
    big = tmp_path / "big.py"
    big.write_text("#" * (settings.max_source_bytes + 1))
    assert main(["grade", "scan-microbatched-grads", str(big)]) == 2
    assert "larger than the 256 KiB limit" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.sandbox
def test_new_scaffolds_a_problem_that_passes_check_and_lists_its_todos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from grader.problems.scaffold import scaffold_files
    from grader.problems.source import ProblemSource

    monkeypatch.setattr(settings, "content_dir", tmp_path)
    assert main(["new", "my-problem"]) == 0
    # `jaxjudge new` writes exactly the snapshot the course editor starts from.
    assert ProblemSource(tmp_path, "my-problem").files() == scaffold_files("my-problem")
    assert main(["new", "my-problem"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["new", "Bad Slug"]) == 2
    capsys.readouterr()

    assert main(["check", "my-problem"]) == 0
    out = capsys.readouterr().out
    assert "my-problem: ok" in out
    for where in ("problem.toml:1", "statement.md:3", "starter.py:1", "hints.md:1",
                  "solution.md:1", "cases.py:13", "mistakes/returns_input.py:3",
                  "reference_solutions/my-problem.py:3"):  # fmt: skip
        assert f"todo: {where}: still holds the scaffold's TODO" in out


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_special_files_are_refused_at_once(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = "/dev/zero"
    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    assert main(["grade", "scan-microbatched-grads", path]) == 2  # no hang, no endless read
    assert "not a regular file" in capsys.readouterr().err


def test_a_byte_order_mark_is_accepted_as_python_accepts_it(tmp_path: Path) -> None:
    from grader.cli import read_submission

    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    assert read_submission(str(path)) == "x = 1\n"


def test_an_error_under_json_is_still_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", "no-such-problem", str(REFERENCE), "--json"]) == 2
    out = capsys.readouterr().out
    assert "no-such-problem" in json.loads(out)["error"]


def test_check_and_prepare_on_a_gpu_need_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("grader.running.devices.gpu_available", lambda: False)
    for command in ("check", "prepare"):
        assert main([command, "scan-microbatched-grads", "--device", "gpu"]) == 2
        assert "needs a GPU worker" in capsys.readouterr().err


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    """`jaxjudge new x | head -0`: the pipe is closed before the command writes."""
    env = {**os.environ, "JAXJUDGE_CONTENT_DIR": str(tmp_path)}
    command = subprocess.Popen(
        [*JAXJUDGE, "new", "left-early"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert command.stdout is not None and command.stderr is not None
    command.stdout.close()  # long before the interpreter has started
    with command.stderr:
        said = command.stderr.read().decode()
    assert command.wait(timeout=60) == 1
    assert said == ""  # no BrokenPipeError, no "Exception ignored" at exit
    assert (tmp_path / "problems" / "left-early" / "problem.toml").is_file()  # it did its work
