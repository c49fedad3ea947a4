"""How grading treats misbehaving submissions, on a tiny problem (`solve(x, scale)`
returns `x * scale`). Each test starts one child process (about 1.5 s)."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from grader import expected
from grader.child.verdicts import Mode, Verdict
from grader.config import settings
from grader.grade import grade, grade_outcome
from grader.judging.trusted import TrustedOutputs
from grader.problems.problem import Problem, load_problem
from grader.problems.scaffold import scaffold
from grader.running.limits import sandbox_limits

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

CORRECT = "def solve(x, scale):\n    return x * scale\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Problem:
    root = tmp_path_factory.mktemp("tiny")
    scaffold("tiny", root)
    toml = root / "problems" / "tiny" / "problem.toml"
    toml.write_text(toml.read_text().replace("wall_seconds = 30", "wall_seconds = 4"))
    return load_problem(root / "problems" / "tiny")


def test_correct_solution_is_accepted(tiny: Problem) -> None:
    report = grade(tiny, CORRECT)
    assert report.verdict is Verdict.ACCEPTED
    assert report.score == 1.0
    assert report.versions["jax"]
    assert report.versions["backend"] == "cpu"


def test_sample_cases_show_inputs_and_expected_hidden_do_not(tiny: Problem) -> None:
    report = grade(tiny, "def solve(x, scale):\n    return x\n")
    sample, hidden = report.cases
    assert not sample.hidden and sample.inputs and sample.expected is not None
    assert (
        hidden.hidden
        and hidden.inputs is None
        and hidden.expected is None
        and hidden.actual is None
    )
    assert report.diagnosis == "You returned x unchanged; multiply it by scale."


def test_a_wrong_answer_before_the_mistakes_are_ready_still_names_the_mistake(
    tiny: Problem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first start grades with the reference's outputs alone; a wrong answer's outputs
    are kept and matched once the whole set is there (asked for only then)."""
    monkeypatch.setattr(settings, "data_dir", tmp_path)  # nothing computed yet
    early = expected.load_or_compute(tiny, mistakes=False)
    assert not early.diagnoses_ready
    asked: list[bool] = []

    def whole() -> TrustedOutputs:
        asked.append(True)
        return expected.load_or_compute(tiny)

    report = grade(tiny, CORRECT, trusted=early, whole=whole)
    assert report.verdict is Verdict.ACCEPTED and asked == []
    unchanged = "def solve(x, scale):\n    return x\n"
    assert grade(tiny, unchanged, trusted=early).diagnosis is None  # no whole set: no name
    report = grade(tiny, unchanged, trusted=early, whole=whole)
    assert report.verdict is Verdict.WRONG_ANSWER and asked == [True]
    assert report.diagnosis == "You returned x unchanged; multiply it by scale."


def test_run_mode_grades_samples_only(tiny: Problem) -> None:
    report = grade(tiny, CORRECT, mode=Mode.RUN)
    assert [case.name for case in report.cases] == ["sample"]


def test_forged_verdict_on_stdout_and_exit_zero_is_not_a_pass(tiny: Problem) -> None:
    source = (
        'import os\nprint(\'{"verdict": "accepted", "score": 1.0}\', flush=True)\nos._exit(0)\n'
    )
    report = grade(tiny, source)
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert report.score == 0.0
    assert '"verdict": "accepted"' in report.stdout  # shown to the learner as output, nothing more


def test_exit_inside_the_function_is_a_runtime_error(tiny: Problem) -> None:
    report = grade(tiny, "import os\ndef solve(x, scale):\n    os._exit(0)\n")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "exited (status 0)" in report.cases[0].message
    assert report.cases[1].verdict is Verdict.SKIPPED


def test_sys_exit_is_explained(tiny: Problem) -> None:
    report = grade(tiny, "import sys\ndef solve(x, scale):\n    sys.exit(0)\n")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "sys.exit()" in report.cases[0].message


def test_infinite_loop_is_killed_at_its_cpu_limit_however_busy_the_machine(tiny: Problem) -> None:
    report = grade(tiny, "def solve(x, scale):\n    while True:\n        pass\n")
    assert report.verdict is Verdict.TIME_LIMIT_EXCEEDED
    # The limit is the submission's CPU time (a loaded machine stretches the wall clock,
    # not the bill): killed once it is spent, not long after.
    limit, used = report.cpu_limit_seconds, report.cpu_seconds
    assert limit is not None and used is not None
    assert used < limit + 2


def test_output_flood_is_output_limit_exceeded(tiny: Problem) -> None:
    report = grade(tiny, "def solve(x, scale):\n    while True:\n        print('x' * 10000)\n")
    assert report.verdict is Verdict.OUTPUT_LIMIT_EXCEEDED
    assert len(report.stdout) < 20_000  # captured output is capped


def test_memory_bomb_is_memory_limit_exceeded(tiny: Problem) -> None:
    report = grade(tiny, "import numpy as np\ndef solve(x, scale):\n    return np.ones(10**10)\n")
    assert report.verdict is Verdict.MEMORY_LIMIT_EXCEEDED


def test_huge_declared_output_is_output_limit_exceeded(tiny: Problem) -> None:
    report = grade(
        tiny,
        "import numpy as np\ndef solve(x, scale):\n    return np.zeros((2000, 1000), np.int8)\n",
    )
    assert report.verdict is Verdict.OUTPUT_LIMIT_EXCEEDED


def test_always_equal_objects_are_converted_to_numbers(tiny: Problem) -> None:
    source = (
        "class Liar(float):\n"
        "    def __eq__(self, other): return True\n"
        "    def __abs__(self): return 0.0\n"
        "    def __sub__(self, other): return 0.0\n"
        "    def __lt__(self, other): return True\n"
        "def solve(x, scale):\n    return [Liar(0.0)] * x.shape[0]\n"
    )
    assert grade(tiny, source).verdict is Verdict.WRONG_ANSWER


def test_none_bool_and_text_outputs_are_wrong_answers(tiny: Problem) -> None:
    assert "returned None" in grade(tiny, "def solve(x, scale):\n    pass\n").cases[0].message
    assert "boolean" in grade(tiny, "def solve(x, scale):\n    return x > 0\n").cases[0].message
    report = grade(tiny, "def solve(x, scale):\n    return 'accepted'\n")
    assert report.verdict is Verdict.WRONG_ANSWER


def test_writing_to_the_result_channel_fails_the_submission(tiny: Problem) -> None:
    source = (
        "import os, sys\n"
        "def solve(x, scale):\n"
        "    os.write(int(sys.argv[1]), b'JJF1garbage' * 10)\n"
        "    return x * scale\n"
    )
    report = grade(tiny, source)
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert report.score == 0.0
    assert "result channel" in report.message


def test_traceback_shows_only_the_learners_frames(tiny: Problem) -> None:
    report = grade(
        tiny,
        "def helper(x):\n    return x / undefined_name\ndef solve(x, scale):\n    return helper(x)\n",
    )
    message = report.cases[0].message
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert 'File "submission.py", line 2, in helper' in message
    assert "return x / undefined_name" in message
    assert "NameError" in message
    assert "child.py" not in message and "grader" not in message


def test_the_childs_environment_is_an_allow_list(
    tiny: Problem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAXJUDGE_TEST_SECRET", "hunter2")
    report = grade(
        tiny, "import os\nprint(sorted(os.environ))\ndef solve(x, scale):\n    return x * scale\n"
    )
    assert report.verdict is Verdict.ACCEPTED
    assert "JAXJUDGE_TEST_SECRET" not in report.stdout
    assert "hunter2" not in report.stdout


def test_reading_the_inputs_does_not_reveal_expected_outputs(tiny: Problem) -> None:
    # The child holds only inputs: every global of the process is searched for
    # the hidden expected value (x * scale) and nothing is found.
    source = (
        "import gc, numpy as np\n"
        "def solve(x, scale):\n"
        "    target = np.asarray(x) * scale\n"
        "    for obj in gc.get_objects():\n"
        "        if isinstance(obj, np.ndarray) and obj is not target and obj.shape == target.shape\\\n"
        "                and obj.size and np.allclose(obj, target) and not np.allclose(obj, np.asarray(x)):\n"
        "            print('FOUND')\n"
        "    return x\n"
    )
    assert "FOUND" not in grade(tiny, source).stdout


def test_limits_inside_the_sandbox(tiny: Problem) -> None:
    source = (
        "import os, resource\n"
        "for name in ('RLIMIT_AS', 'RLIMIT_CPU', 'RLIMIT_CORE', 'RLIMIT_FSIZE', 'RLIMIT_NOFILE'):\n"
        "    print(name, *resource.getrlimit(getattr(resource, name)))\n"
        "print('uid', os.getuid())\nprint('pid', os.getpid())\n"
        "def solve(x, scale):\n    return x * scale\n"
    )
    report = grade(tiny, source)
    limits = {
        line.split()[0]: [int(v) for v in line.split()[1:]] for line in report.stdout.splitlines()
    }
    # A cgroup bounds memory where there is one; RLIMIT_AS only where there is not.
    address_space = sandbox_limits().address_space_bytes(2048, "cpu")
    assert (
        limits["RLIMIT_AS"]
        == [resource.RLIM_INFINITY if address_space is None else address_space] * 2
    )
    assert (
        0 < limits["RLIMIT_CPU"][1] < 4 * (os.cpu_count() or 1) + 20
    )  # wall 4 s on every core, plus slack
    assert limits["RLIMIT_CORE"] == [0, 0]
    assert limits["RLIMIT_FSIZE"] == [64 * 2**20] * 2
    assert limits["RLIMIT_NOFILE"] == [1024, 1024]
    assert limits["uid"][0] == 65534  # nobody, inside its own user namespace
    assert limits["pid"][0] < 10  # a fresh PID namespace


def test_a_child_that_cannot_start_is_an_internal_error_without_waiting(tiny: Problem) -> None:
    import time

    from grader.judging.job import Job, Solution
    from grader.running.launch import LaunchSpec
    from grader.running.supervise import ProcessRunner

    class Broken:
        def launch(
            self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
        ) -> LaunchSpec:
            return LaunchSpec(["/bin/false"], {}, "/")

    job = Job("solve", 1, (Solution("s", CORRECT),), tiny.case_bank.samples, 4.0, 2048)
    started = time.monotonic()
    outcome = ProcessRunner(Broken()).run(job)
    assert outcome.startup_error
    assert time.monotonic() - started < 5  # not the 120 s start-up allowance


def test_the_pool_retries_a_child_that_failed_to_start(tiny: Problem) -> None:
    from grader.judging.job import Job, Solution
    from grader.running.launch import LaunchSpec, PlainLauncher
    from grader.running.pool import WarmPool

    class FirstBroken:
        def __init__(self) -> None:
            self.calls = 0

        def launch(
            self, *, device: str, memory_mb: int, result_fd: int, standby: bool = False
        ) -> LaunchSpec:
            self.calls += 1
            if self.calls == 1:
                return LaunchSpec(["/bin/false"], {}, "/")
            return PlainLauncher(trusted=False).launch(
                device=device, memory_mb=memory_mb, result_fd=result_fd
            )

    pool = WarmPool(FirstBroken(), size=1, memory_mb=2048)
    try:
        job = Job("solve", 1, (Solution("s", CORRECT),), tiny.case_bank.samples, 10.0, 2048)
        outcome = pool.run(job)
        assert outcome.startup_error is None
        assert outcome.finished
    finally:
        pool.close()


def test_a_byte_order_mark_runs_as_python_runs_it(tiny: Problem) -> None:
    report = grade(tiny, "\ufeff" + CORRECT, mode=Mode.RUN)  # as saved by some editors
    assert report.verdict is Verdict.ACCEPTED, report.message


def test_the_samples_reports_are_told_before_the_hidden_cases_run(tiny: Problem) -> None:
    """The samples_seen hook hears the samples' reports once the child answered them
    all, the same reports the verdict carries, and never a hidden case."""
    from grader.judging.judge import GradingHooks
    from grader.judging.report import CaseReport

    told: list[list[CaseReport]] = []
    hooks = GradingHooks(samples_seen=told.append)
    report = grade_outcome(tiny, "def solve(x, scale):\n    return x\n", hooks=hooks).report
    assert len(told) == 1
    samples = [case for case in report.cases if not case.hidden]
    assert told[0] == samples and all(not case.hidden for case in told[0])
    assert report.verdict is Verdict.WRONG_ANSWER
    # A run (samples only) has no hidden phase: nobody is told ahead of the verdict.
    told.clear()
    grade_outcome(tiny, CORRECT, mode=Mode.RUN, hooks=hooks)
    assert told == []
